#!/usr/bin/env bash
# TensorFlow backend throughput: oxiserve (`platform: "tensorflow_savedmodel"`, dynamic batching)
# against raw Python TensorFlow (the SavedModel's serving_default signature called back to back;
# the same tensorflow-cpu wheel, whose libtensorflow_cc.so.2 the server opens) in the same run.
#
# Model (MODEL; bench/tensorflow/make_model.py, fixed seed): mlp, x FP32 [N,1024] -> 3 x 1024
# hidden (MatMul + bias + ReLU) -> y [N,256] (6.8 MFLOP per row, the ONNX benchmark's mlp), or
# encoder, x FP32 [N,64,256] -> 2 transformer encoder blocks -> y [N,64,256] (the ONNX
# benchmark's encoder).
#   raw      bench/tensorflow/raw_tf.py: T = RAW_THREADS Python threads calling the signature on
#            a fixed batch of B = RAW_BATCHES rows for RAW_DURATION seconds; rows/s per T and B,
#            the best = "raw"
#   server   target/release/oxiserve serving the model: max_batch_size MAX_BATCH,
#            dynamic_batching { max_queue_delay_microseconds: QUEUE_DELAY_US },
#            instance_group [{ count: INSTANCES, kind: KIND_CPU }] (TensorFlow's thread pools are
#            per process, shared by the sessions); oxiserve-perf (crates/perf) sending CLIENT_BATCH
#            rows per request (its -b; 1: the dynamic batcher forms every batch; KServe v2, binary
#            tensor extension, binary output) at CONCURRENCY
#            connections, one request in flight each: rows/s, p50, p99, the average executed
#            batch (GET /v2/models/MODEL/stats) and the CPUs the server (/proc/PID/stat) and
#            oxiserve-perf used over each run. oxiserve-perf and the server share the CPUs.
# Raw and server runs alternate RUNS times (raw run 1, server run 1 at every concurrency, raw
# run 2, ...; the server idles during raw runs); the headline takes medians. The server's answer
# is checked against Python TensorFlow before and after the load.
# Headline: server rows/s at its best concurrency / raw rows/s at the best batch; goal >= 0.90.
#
#   bench/tensorflow_throughput.sh                                             # 3 runs x 10 s
#   MODEL=encoder bench/tensorflow_throughput.sh   # results: bench/results/tensorflow_throughput_encoder.md
#   BUILD=0 RUNS=1 DURATION=2s RAW_DURATION=1 RESULTS=/tmp/tf.md bench/tensorflow_throughput.sh
#   CLIENT_BATCH=16 CONCURRENCY="2 4 8" bench/tensorflow_throughput.sh   # results: ..._batch16.md
#
# Settings (environment): MODEL (mlp), RUNS (3), DURATION (10s), WARMUP (3s), RAW_DURATION (5), RAW_BATCHES
# (1 8 32 64), CONCURRENCY (1 8 32 64 128), MAX_BATCH (64), QUEUE_DELAY_US (1000), INSTANCES (2,
# Triton's default for TensorFlow on CPUs), RAW_THREADS (1 and INSTANCES: one caller, and as
# many as the server has instances), CLIENT_BATCH (1; results files get the suffix _batchN
# for N > 1), BUILD (1: build the release oxiserve and
# oxiserve-perf first; 0: use them as they are), OXISERVE_BIN (target/release/oxiserve), PYTHON
# (.venv/bin/python), RESULTS (bench/results/tensorflow_throughput.md). Ports: 18460-18462.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
RAW_DURATION=${RAW_DURATION:-5}
RAW_BATCHES=${RAW_BATCHES:-1 8 32 64}
CONCURRENCY=${CONCURRENCY:-1 8 32 64 128}
MAX_BATCH=${MAX_BATCH:-64}
QUEUE_DELAY_US=${QUEUE_DELAY_US:-1000}
INSTANCES=${INSTANCES:-2}
RAW_THREADS=${RAW_THREADS:-$(printf '%s\n' 1 "$INSTANCES" | sort -un | xargs)}
CLIENT_BATCH=${CLIENT_BATCH:-1}
suffix=; [ "$CLIENT_BATCH" = 1 ] || suffix=_batch$CLIENT_BATCH
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
PYTHON=${PYTHON:-.venv/bin/python}
M=${MODEL:-mlp}
case $M in
  mlp) ABOUT="x FP32 [N,1024] -> 3 x 1024 (MatMul + bias + ReLU) -> y [N,256], 6.8 MFLOP/row"
    RESULTS=${RESULTS:-bench/results/tensorflow_throughput$suffix.md} ;;
  encoder) ABOUT="x FP32 [N,64,256] (pre-embedded tokens) -> 2 transformer encoder blocks (4 heads, FFN 1024, GELU, post-LN) -> y [N,64,256], 64 KB in and out per row"
    RESULTS=${RESULTS:-bench/results/tensorflow_throughput_encoder$suffix.md} ;;
  *) echo "MODEL must be mlp or encoder" >&2; exit 2 ;;
esac
PORT=18460

WORK=$(mktemp -d -t tensorflow-throughput-bench.XXXXXX)
SERVER_PID=
stop_server() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }; }
trap 'stop_server; rm -rf "$WORK"' EXIT
log() { echo "[$(date +%T)] $*" >&2; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "–"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

. bench/lib/common.sh
model_dims "$M"

if [ "$BUILD" = 1 ]; then
  log "cargo build --release --locked --bin oxiserve"
  cargo build --release --locked --bin oxiserve
fi
ensure_perf "$BUILD"
TF=$("$PYTHON" bench/tensorflow/make_model.py "$WORK/data" --model "$M")
perf_data "$WORK/data/model.body" "$WORK/data/model.data.json" "$(cat "$WORK/data/model.hlen")"

mkdir -p "$WORK/repo/$M/1"
ln -s "$WORK/data/model.savedmodel" "$WORK/repo/$M/1/model.savedmodel"
cat >"$WORK/repo/$M/config.pbtxt" <<CFG
name: "$M"
platform: "tensorflow_savedmodel"
max_batch_size: $MAX_BATCH
input [ { name: "x", data_type: TYPE_FP32, dims: [ $DIMS_IN ] } ]
output [ { name: "y", data_type: TYPE_FP32, dims: [ $DIMS_OUT ] } ]
instance_group [ { count: $INSTANCES, kind: KIND_CPU } ]
dynamic_batching { max_queue_delay_microseconds: $QUEUE_DELAY_US }
CFG

TICK=$(getconf CLK_TCK)
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
PERF_ARGS="-b $CLIENT_BATCH --input-data $WORK/data/model.data.json --input-tensor-format binary --output-tensor-format binary"

BUSY=$(cpu_busy)
TF_CPP_MIN_LOG_LEVEL=1 "$OXISERVE_BIN" --model-repository="$WORK/repo" --http-port=$PORT \
  --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2)) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
await_ready "$PORT" "$SERVER_PID" 120 "$M" || { log "server failed: $(server_log_tail "$WORK/server.log")"; exit 1; }
LIBRARY=$(grep -o 'loaded [^ ]*libtensorflow[^ ]*' "$WORK/server.log" | head -1 | cut -d' ' -f2)
NOTE="before: $("$PYTHON" bench/tensorflow/check_answer.py "$PORT" "$M" "$WORK/data")"

declare -A RAW=() RPS=() P50=() P99=() BATCH=() SCPU=() PCPU=()
for run in $(seq "$RUNS"); do
  for t in $RAW_THREADS; do
    log "run $run: raw_tf.py --threads $t"
    while read -r _ kvs; do
      for kv in $kvs; do declare "${kv%%=*}=${kv#*=}"; done
      RAW[$t:$batch]="${RAW[$t:$batch]:-} $rows_per_s"
    done < <("$PYTHON" bench/tensorflow/raw_tf.py "$WORK/data/model.savedmodel" \
      --batches "$(tr ' ' ',' <<<"$RAW_BATCHES")" --duration "$RAW_DURATION" --threads "$t" | grep '^RAW ')
  done
  # shellcheck disable=SC2086
  perf_point "$M" "$PORT" 128 "$WARMUP" $PERF_ARGS >/dev/null
  for c in $CONCURRENCY; do
    read -r i0 e0 <<<"$(model_counts "$PORT" "$M")"
    t0=$(proc_ticks "$SERVER_PID")
    # shellcheck disable=SC2086
    out=$(perf_point "$M" "$PORT" "$c" "$DURATION" $PERF_ARGS)
    t1=$(proc_ticks "$SERVER_PID")
    read -r i1 e1 <<<"$(model_counts "$PORT" "$M")"
    rps=– p50_us=– p99_us=– duration_s=1 tool_cpu_s=0
    for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done
    rps=$(rows_per_s "$rps" "$CLIENT_BATCH")
    RPS[$c]="${RPS[$c]:-} $rps"
    P50[$c]="${P50[$c]:-} $p50_us"
    P99[$c]="${P99[$c]:-} $p99_us"
    BATCH[$c]="${BATCH[$c]:-} $(ratio $((i1 - i0)) $((e1 - e0)))"
    SCPU[$c]="${SCPU[$c]:-} $(awk -v a="$t0" -v b="$t1" -v t="$TICK" -v d="$duration_s" 'BEGIN { printf "%.2f", (b - a) / t / d }')"
    PCPU[$c]="${PCPU[$c]:-} $(awk -v c="$tool_cpu_s" -v d="$duration_s" 'BEGIN { printf "%.2f", c / d }')"
    log "run $run c=$c: $out"
  done
done
NOTE="$NOTE; after: $("$PYTHON" bench/tensorflow/check_answer.py "$PORT" "$M" "$WORK/data")"
stop_server

best_raw=0 best_b=– best_srv=0 best_c=–
for t in $RAW_THREADS; do
  for b in $RAW_BATCHES; do
    m=$(median <<<"${RAW[$t:$b]:-}")
    if [ "$m" != – ] && awk -v a="$m" -v b="$best_raw" 'BEGIN { exit !(a > b) }'; then best_raw=$m best_b="$b, $t thread(s)"; fi
  done
done
for c in $CONCURRENCY; do
  m=$(median <<<"${RPS[$c]:-}")
  if [ "$m" != – ] && awk -v a="$m" -v b="$best_srv" 'BEGIN { exit !(a > b) }'; then best_srv=$m best_c=$c; fi
done
HEADLINE=$(awk -v s="$best_srv" -v r="$best_raw" 'BEGIN { if (r > 0) printf "%.2f", s / r; else print "–" }')

{
  echo "# TensorFlow backend: oxiserve with dynamic batching vs raw Python TensorFlow"
  echo
  echo "A SavedModel ($M) served by oxiserve's \`tensorflow\` backend with dynamic batching, $(rows_per_request "$CLIENT_BATCH") (KServe v2 over HTTP), against the same SavedModel's signature called by Python TensorFlow back to back at the best batch size, in the same run. Goal: the server reaches >= 0.90 of raw."
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); CPUs busy with other work before the run: $BUSY. The server and oxiserve-perf share the CPUs, nothing pinned; the raw baseline runs alone (the server idles), so the server pays for HTTP and the load generator (columns *server CPUs*, *perf CPUs*)."
  echo "- Versions: oxiserve $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (uncommitted changes)'); the server opened \`${LIBRARY#"$PWD/"}\`; raw: $TF, $(pyver "$PYTHON") — the same tensorflow-cpu wheel on both sides."
  echo "- Model: $ABOUT; server: max_batch_size $MAX_BATCH, dynamic_batching { max_queue_delay_microseconds: $QUEUE_DELAY_US }, $INSTANCES instance(s); raw: $(tr ' ' '\n' <<<"$RAW_THREADS" | paste -sd/) calling thread(s), the best counts; TensorFlow's default thread pools on both sides."
  echo "- Medians of $RUNS run(s) of $DURATION per point (raw: ${RAW_DURATION}s per batch size), raw and server runs alternating."
  echo
  echo "## Headline"
  echo
  echo "| raw rows/s (batch, threads) | server rows/s (connections) | server/raw |"
  echo "| ---: | ---: | ---: |"
  echo "| $best_raw ($best_b) | $best_srv ($best_c) | **$HEADLINE** |"
  echo
  if awk -v h="$HEADLINE" 'BEGIN { exit !(h + 0 >= 0.9) }'; then
    echo "Goal (>= 0.90 of raw at its best batch) **met**."
  else
    echo "Goal (>= 0.90 of raw at its best batch) **not met** ($HEADLINE)."
  fi
  echo
  echo "## Raw Python TensorFlow, rows/s by calling threads and batch size (median; every run)"
  echo
  echo "| threads | batch | rows/s | runs |"
  echo "| ---: | ---: | ---: | --- |"
  for t in $RAW_THREADS; do
    for b in $RAW_BATCHES; do echo "| $t | $b | $(median <<<"${RAW[$t:$b]:-}") |${RAW[$t:$b]:-} |"; done
  done
  echo
  echo "## oxiserve, $(rows_per_request "$CLIENT_BATCH") (medians; rows/s of every run)"
  echo
  echo "| connections | rows/s | p50 µs | p99 µs | avg batch | server CPUs | perf CPUs | runs |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  for c in $CONCURRENCY; do
    echo "| $c | $(median <<<"${RPS[$c]:-}") | $(median <<<"${P50[$c]:-}") | $(median <<<"${P99[$c]:-}") | $(median <<<"${BATCH[$c]:-}") | $(median <<<"${SCPU[$c]:-}") | $(median <<<"${PCPU[$c]:-}") |${RPS[$c]:-} |"
  done
  echo
  echo "Answer check: $NOTE"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "MODEL=$M RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP RAW_DURATION=$RAW_DURATION RAW_BATCHES=\"$RAW_BATCHES\" CONCURRENCY=\"$CONCURRENCY\" MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US INSTANCES=$INSTANCES RAW_THREADS=\"$RAW_THREADS\" CLIENT_BATCH=$CLIENT_BATCH BUILD=$BUILD bench/tensorflow_throughput.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PYTHON bench/tensorflow/make_model.py \$WORK/data --model $M   # the SavedModel, the request body, TensorFlow's answer"
  echo "TF_CPP_MIN_LOG_LEVEL=1 $OXISERVE_BIN --model-repository=\$WORK/repo --http-port=$PORT --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2))"
  echo "$PYTHON bench/tensorflow/check_answer.py $PORT $M \$WORK/data   # before and after the load"
  echo "# RUNS times: the raw run, then the server's warm-up (C = 128 for $WARMUP) and one run per C"
  echo "$PYTHON bench/tensorflow/raw_tf.py \$WORK/data/model.savedmodel --batches $(tr ' ' ',' <<<"$RAW_BATCHES") --duration $RAW_DURATION --threads \$T   # T = $RAW_THREADS"
  echo "$PERF -m $M -u 127.0.0.1:$PORT -i http --concurrency-range \$C ${PERF_ARGS//$WORK\//\$WORK/} -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json   # C = $CONCURRENCY"
  echo '```'
} >"$RESULTS"
log "results: $RESULTS"
