#!/usr/bin/env bash
# OpenVINO backend throughput: oxiserve (`backend: "openvino"`, dynamic batching) against raw
# OpenVINO (Python InferRequest.infer, back to back, same wheel, same NUM_STREAMS) in the same run.
#
# Model (MODEL): bench/onnx/make_models.py's mlp (X FP32 [N,1024] -> 3 x 1024 hidden -> Y [N,256],
# 6.8 MFLOP/row) or encoder (X FP32 [N,64,256] -> 2 transformer encoder blocks -> Y [N,64,256]),
# converted to OpenVINO IR (model.xml + model.bin) with openvino.convert_model.
# Setups (SETUPS): COUNT instances (server: instance_group count COUNT, NUM_STREAMS COUNT;
# raw: COUNT infer requests on one compiled model with NUM_STREAMS COUNT, one Python thread each).
#   raw      bench/openvino/raw_ov.py: rows/s per batch size in RAW_BATCHES; the best = "raw"
#   server   target/release/oxiserve, max_batch_size MAX_BATCH, dynamic_batching
#            { max_queue_delay_microseconds: QUEUE_DELAY_US }; oxiserve-perf sending CLIENT_BATCH
#            rows per request (its -b; 1: the dynamic batcher forms every batch) at each
#            CONCURRENCY: rows/s, p50, p99, avg batch. TRANSPORT: binary (the
#            tensors in the HTTP bodies, binary tensor extension) or shm (the tensors in POSIX
#            shared memory registered with the server, Triton's system shared memory extension:
#            the HTTP requests carry only their JSON headers)
# Headline: server rows/s at its best concurrency / raw rows/s at its best batch; goal >= 0.90.
# Raw and server runs alternate RUNS times; medians. Results: bench/results/openvino_throughput.md.
#
#   bench/openvino_throughput.sh
#   MODEL=encoder bench/openvino_throughput.sh      # results: bench/results/openvino_throughput_encoder.md
#   BUILD=0 RUNS=1 DURATION=3s RAW_DURATION=2 RESULTS=/tmp/ov.md bench/openvino_throughput.sh
#   MODEL=encoder TRANSPORT=shm bench/openvino_throughput.sh   # results: ..._encoder_shm.md
#   CLIENT_BATCH=16 CONCURRENCY="4 8 16" bench/openvino_throughput.sh   # results: ..._batch16.md
#
# Settings (environment): MODEL (mlp), SETUPS (1 2), RUNS (3), DURATION (5s), WARMUP (2s), RAW_DURATION (3),
# RAW_BATCHES (1 16 64), CONCURRENCY (8 64 128), MAX_BATCH (64), QUEUE_DELAY_US (1000), TRANSPORT (binary),
# CLIENT_BATCH (1; results files get the suffix _batchN for N > 1), DATA (a folder holding an earlier
# run's models/MODEL.xml + .bin, MODEL.body, .hlen and .in.npy, e.g. for a host without the onnx
# package; default: made here), BUILD (1),
# OXISERVE_BIN (target/release/oxiserve), PYTHON (.venv/bin/python), RESULTS. Ports: 18450-18452.
set -euo pipefail
cd "$(dirname "$0")/.."

SETUPS=${SETUPS:-1 2}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-2s}
RAW_DURATION=${RAW_DURATION:-3}
RAW_BATCHES=${RAW_BATCHES:-1 16 64}
CONCURRENCY=${CONCURRENCY:-8 64 128}
MAX_BATCH=${MAX_BATCH:-64}
QUEUE_DELAY_US=${QUEUE_DELAY_US:-1000}
BUILD=${BUILD:-1}
DATA=${DATA:-}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
PYTHON=${PYTHON:-.venv/bin/python}
M=${MODEL:-mlp}
TRANSPORT=${TRANSPORT:-binary}
CLIENT_BATCH=${CLIENT_BATCH:-1}
case $TRANSPORT in
  binary) suffix= ;;
  shm) suffix=_shm ;;
  *) echo "TRANSPORT must be binary or shm" >&2; exit 2 ;;
esac
[ "$CLIENT_BATCH" = 1 ] || suffix=${suffix}_batch$CLIENT_BATCH
case $M in
  mlp) ABOUT="The mlp of \`bench/onnx/make_models.py\` (X FP32 [N,1024] -> 3 x 1024 hidden -> Y [N,256], 6.8 MFLOP/row)"
    RESULTS=${RESULTS:-bench/results/openvino_throughput$suffix.md} ;;
  encoder) ABOUT="The encoder of \`bench/onnx/make_models.py\` (X FP32 [N,64,256] pre-embedded tokens -> 2 transformer encoder blocks, 4 heads, FFN 1024 -> Y [N,64,256]; 64 KB in and out per row)"
    RESULTS=${RESULTS:-bench/results/openvino_throughput_encoder$suffix.md} ;;
  *) echo "MODEL must be mlp or encoder" >&2; exit 2 ;;
esac
PORT=18450

WORK=$(mktemp -d -t openvino-throughput-bench.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT
. bench/lib/common.sh
model_dims "$M"

if [ -n "$DATA" ]; then
  log "models: $DATA's"
  cp -r "$DATA" "$WORK/data"
else
  log "models: bench/onnx/make_models.py, then openvino.convert_model; answers: OpenVINO's"
  "$PYTHON" bench/onnx/make_models.py "$WORK/data" >"$WORK/models.txt"
  "$PYTHON" - "$WORK/data" "$M" <<'PY'
import sys, openvino as ov
d, m = sys.argv[1], sys.argv[2]
ov.save_model(ov.convert_model(f"{d}/models/{m}.onnx"), f"{d}/models/{m}.xml", compress_to_fp16=False)
PY
fi
# OpenVINO's own answer for the request row on this host (check_answer.py's reference)
"$PYTHON" - "$WORK/data" "$M" <<'PY'
import sys, numpy as np, openvino as ov
d, m = sys.argv[1], sys.argv[2]
compiled = ov.Core().compile_model(f"{d}/models/{m}.xml", "CPU")
np.save(f"{d}/{m}.want.npy", compiled(np.load(f"{d}/{m}.in.npy"))[0])
PY
perf_data "$WORK/data/$M.body" "$WORK/data/$M.data.json" "$(cat "$WORK/data/$M.hlen")"
if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve >"$WORK/build.log" 2>&1; fi
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1

model_repo() { # COUNT -> repository folder
  local dir=$WORK/repo-$1
  mkdir -p "$dir/$M/1"
  cp "$WORK/data/models/$M.xml" "$WORK/data/models/$M.bin" "$dir/$M/1/" 
  mv "$dir/$M/1/$M.xml" "$dir/$M/1/model.xml"; mv "$dir/$M/1/$M.bin" "$dir/$M/1/model.bin"
  cat >"$dir/$M/config.pbtxt" <<CFG
name: "$M"
backend: "openvino"
max_batch_size: $MAX_BATCH
input [ { name: "X", data_type: TYPE_FP32, dims: [ $DIMS_IN ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ $DIMS_OUT ] } ]
dynamic_batching { max_queue_delay_microseconds: $QUEUE_DELAY_US }
instance_group [ { count: $1, kind: KIND_CPU } ]
parameters { key: "NUM_STREAMS" value: { string_value: "$1" } }
CFG
  echo "$dir"
}
cmd() { echo "$OXISERVE_BIN --model-repository=$1 --http-port=$PORT --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2))"; }
case $TRANSPORT in
  binary) perf_args="-b $CLIENT_BATCH --input-data $WORK/data/$M.data.json --input-tensor-format binary --output-tensor-format binary" ;;
  shm) perf_args="-b $CLIENT_BATCH --input-data $WORK/data/$M.data.json --shared-memory system" ;;
esac

echo -e "setup\tbatch\trun\trows_per_s" >"$WORK/raw.tsv"
echo -e "setup\tconns\trun\trps\tp50_us\tp99_us\tbatch" >"$WORK/runs.tsv"
declare -A STATUS=()
for s in $SETUPS; do
  BUSY=$(cpu_busy); log "setup $s: CPUs $BUSY busy with other work"
  repo=$(model_repo "$s")
  $(cmd "$repo") >"$WORK/server.$s.log" 2>&1 &
  SERVER_PID=$!
  why=$(await_ready "$PORT" "$SERVER_PID" 120 "$M" && "$PYTHON" bench/onnx/check_answer.py "$PORT" "$M" "$WORK/data" 2>&1) ||
    { STATUS[$s]="server failed: $why $(server_log_tail "$WORK/server.$s.log")"; log "${STATUS[$s]}"; stop_server; continue; }
  STATUS[$s]="answer before the load: $why"
  perf_point "$M" "$PORT" 128 "$WARMUP" $perf_args >/dev/null
  for r in $(seq "$RUNS"); do
    "$PYTHON" bench/openvino/raw_ov.py "$WORK/data/models/$M.xml" --requests "$s" --streams "$s" \
      --batches "$(tr ' ' ',' <<<"$RAW_BATCHES")" --duration "$RAW_DURATION" >"$WORK/raw.out"
    RAW_VERSION=$(sed -n 's/^VERSION //p' "$WORK/raw.out")
    grep '^RAW ' "$WORK/raw.out" | while read -r _ b v _; do
      echo -e "$s\t${b#batch=}\t$r\t${v#rows_per_s=}" >>"$WORK/raw.tsv"; log "$s raw ${b} run $r: ${v#rows_per_s=} rows/s"
    done
    for c in $CONCURRENCY; do
      read -r i0 e0 <<<"$(model_counts "$PORT" "$M")"
      out=$(perf_point "$M" "$PORT" "$c" "$DURATION" $perf_args)
      read -r i1 e1 <<<"$(model_counts "$PORT" "$M")"
      [ -n "$out" ] || continue
      for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done
      rps=$(rows_per_s "$rps" "$CLIENT_BATCH")
      echo -e "$s\t$c\t$r\t$rps\t$p50_us\t$p99_us\t$(ratio $((i1 - i0)) $((e1 - e0)))" >>"$WORK/runs.tsv"
      log "$s server c=$c run $r: $rps rows/s"
    done
  done
  after=$("$PYTHON" bench/onnx/check_answer.py "$PORT" "$M" "$WORK/data" 2>&1) && STATUS[$s]="${STATUS[$s]}; after the load: $after" ||
    STATUS[$s]="${STATUS[$s]}; WRONG ANSWER after the load: $after"
  LIBRARY=$(grep -o 'openvino backend: loaded .*' "$WORK/server.$s.log" | head -n 1 | sed 's/.*loaded //')
  stop_server
done

median() { # FILE COLUMN-FILTER(awk) VALUE-COLUMN -> median
  awk -F'\t' "NR > 1 && $2 { print \$$3 }" "$1" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
{
  echo "# OpenVINO backend: oxiserve with dynamic batching vs raw OpenVINO (KServe v2 over HTTP$([ "$TRANSPORT" = binary ] || echo ', tensors in system shared memory'))"
  echo
  echo "$ABOUT, converted to OpenVINO IR, served by oxiserve's \`openvino\` backend with dynamic batching, $(rows_per_request "$CLIENT_BATCH"), against the same IR run by OpenVINO's Python runtime directly (\`InferRequest.infer\` back to back, same wheel, same NUM_STREAMS, best batch size), in the same run. Goal: server >= 0.90 of raw."
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), Linux $(uname -r); CPUs busy with other work before the last setup: ${BUSY:-?} (a shared machine: other engineers were building). oxiserve-perf and the server share the CPUs; raw runs alone (the server idles meanwhile)."
  echo "- Server loaded \`$(sed "s|$PWD/||" <<<"${LIBRARY:-?}")\`; raw: ${RAW_VERSION:-?} ($(pyver "$PYTHON"))."
  echo "- $RUNS runs of $DURATION per concurrency (after a $WARMUP warm-up at 128 connections), raw $RUNS runs of ${RAW_DURATION} s per batch size, alternating."
  echo
  echo "## Headline (medians)"
  echo
  echo "| instances = streams | raw rows/s (best batch) | server rows/s (best connections) | server/raw | p50 / p99 µs there | avg batch |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
  for s in $SETUPS; do
    rb= rv=0; for b in $RAW_BATCHES; do v=$(median "$WORK/raw.tsv" "\$1 == $s && \$2 == $b" 4); [ -n "$v" ] && [ "$v" -gt "$rv" ] && rv=$v rb=$b; done
    sc= sv=0; for c in $CONCURRENCY; do v=$(median "$WORK/runs.tsv" "\$1 == $s && \$2 == $c" 4); [ -n "$v" ] && [ "$v" -gt "$sv" ] && sv=$v sc=$c; done
    f="\$1 == $s && \$2 == ${sc:-0}"
    echo "| $s | $rv ($rb) | $sv ($sc) | $(ratio "$sv" "$rv") | $(median "$WORK/runs.tsv" "$f" 5) / $(median "$WORK/runs.tsv" "$f" 6) | $(awk -F'\t' "NR > 1 && $f { print \$7 }" "$WORK/runs.tsv" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }') |"
  done
  echo
  echo "## Command"
  echo
  echo '```sh'
  echo "MODEL=$M SETUPS=\"$SETUPS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP RAW_DURATION=$RAW_DURATION RAW_BATCHES=\"$RAW_BATCHES\" CONCURRENCY=\"$CONCURRENCY\" MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US TRANSPORT=$TRANSPORT CLIENT_BATCH=$CLIENT_BATCH BUILD=$BUILD bench/openvino_throughput.sh"
  echo '```'
  echo
  echo "Server config (setup ${SETUPS%% *}):"
  echo
  echo '```'
  cat "$WORK/repo-${SETUPS%% *}/$M/config.pbtxt" 2>/dev/null || echo "(not written)"
  echo '```'
  echo
  echo "## Status"
  echo
  for s in $SETUPS; do echo "- setup $s: ${STATUS[$s]:-?}"; done
  echo
  echo "## All runs"
  echo
  echo "Raw: | setup | batch | run | rows/s |"; echo
  tail -n +2 "$WORK/raw.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
  echo
  echo "Server: | setup | connections | run | rows/s | p50 µs | p99 µs | avg batch |"; echo
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} | sed "s|$WORK/|\$WORK/|g" >"$RESULTS"
log "wrote $RESULTS"
