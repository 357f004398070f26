#!/usr/bin/env bash
# PyTorch backend throughput: oxiserve (`backend: "pytorch"`, a traced TorchScript MLP) against
# raw Python torch (same libtorch 2.13.0, same threads) in one run, with the dynamic batcher on
# and off.
#
# Model (bench/pytorch/make_model.py, fixed seed): X FP32 [N,512] -> Linear 1024 + ReLU ->
# Linear 1024 + ReLU -> Linear 512 -> Y [N,512] (4.2 MFLOP per row).
# Setups (SETUPS, "COUNTxINTRA"): COUNT instances (raw: Python threads sharing the module, as
# the server's instances do) of INTRA intra-op threads each.
# For each setup:
#   raw      bench/pytorch/raw_torch.py: forward() under no_grad back to back on a fixed batch
#            of B = RAW_BATCHES rows for RAW_DURATION seconds; rows/s per B
#   server   target/release/oxiserve (with libtriton_pytorch.so beside it) serving the model twice:
#            `dyn` (max_batch_size MAX_BATCH, dynamic_batching { max_queue_delay_microseconds:
#            QUEUE_DELAY_US }) and `nodyn` (max_batch_size MAX_BATCH, no batcher), each with
#            instance_group [{ count: COUNT, kind: KIND_CPU }] and INTRA_OP_THREAD_COUNT INTRA;
#            oxiserve-perf (crates/perf) sending one row per request (KServe v2, binary tensor
#            extension: the row of make_model.py's request body, binary output) at CONCURRENCY
#            connections, one request in flight each: rows/s, p50, p99, the average executed
#            batch (GET /v2/models/<m>/stats) and the CPUs the server (/proc/PID/stat) and
#            oxiserve-perf (its own user + system time, /proc/self/stat) used over each
#            oxiserve-perf run. oxiserve-perf and the server share the CPUs.
# The server's answer is checked against Python torch before and after the load.
#
#   bench/pytorch_throughput.sh                                          # 10 s per point
#   BUILD=0 DURATION=2s RAW_DURATION=1 RESULTS=/tmp/pt.md bench/pytorch_throughput.sh   # quick
#
# Settings (environment): SETUPS (2x1 1x2), DURATION (10s), WARMUP (3s), RAW_DURATION (5),
# RAW_BATCHES (1 8 32 64), CONCURRENCY (1 4 16 64), MAX_BATCH (64), QUEUE_DELAY_US (1000),
# BUILD (1: build the release binary (with the pytorch feature) and oxiserve-perf first; 0: use
# them as they are), OXISERVE_BIN (target/release/oxiserve),
# PYTHON (.venv/bin/python), RESULTS (bench/results/pytorch_throughput.md). Ports: 18450-18452.
set -euo pipefail
cd "$(dirname "$0")/.."

SETUPS=${SETUPS:-2x1 1x2}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
RAW_DURATION=${RAW_DURATION:-5}
RAW_BATCHES=${RAW_BATCHES:-1 8 32 64}
CONCURRENCY=${CONCURRENCY:-1 4 16 64}
MAX_BATCH=${MAX_BATCH:-64}
QUEUE_DELAY_US=${QUEUE_DELAY_US:-1000}
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
PYTHON=${PYTHON:-.venv/bin/python}
RESULTS=${RESULTS:-bench/results/pytorch_throughput.md}
PORT=18450

WORK=$(mktemp -d -t pytorch-throughput-bench.XXXXXX)
SERVER_PID=
stop_server() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }; }
trap 'stop_server; rm -rf "$WORK"' EXIT
log() { echo "[$(date +%T)] $*" >&2; }

. bench/lib/common.sh

if [ "$BUILD" = 1 ]; then
  LIBTORCH="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch"
  export LIBTORCH
  log "cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch"
  cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch
fi
ensure_perf "$BUILD"
TORCH=$("$PYTHON" bench/pytorch/make_model.py "$WORK/data")
# oxiserve-perf's input data: the row of the request body (the same FP32 values, sent as binary)
perf_data "$WORK/data/mlp.body" "$WORK/data/mlp.data.json" "$(cat "$WORK/data/mlp.hlen")"

repo() { # SETUP -> a repository with `dyn` and `nodyn`
  local dir=$WORK/repo-$1 count=${1%x*} intra=${1#*x}
  for m in dyn nodyn; do
    mkdir -p "$dir/$m/1"
    ln -sf "$WORK/data/model.pt" "$dir/$m/1/model.pt"
    cat >"$dir/$m/config.pbtxt" <<CFG
name: "$m"
backend: "pytorch"
max_batch_size: $MAX_BATCH
input [ { name: "INPUT__0", data_type: TYPE_FP32, dims: [ 512 ] } ]
output [ { name: "OUTPUT__0", data_type: TYPE_FP32, dims: [ 512 ] } ]
instance_group [ { count: $count, kind: KIND_CPU } ]
parameters { key: "INTRA_OP_THREAD_COUNT" value: { string_value: "$intra" } }
CFG
  done
  echo "dynamic_batching { max_queue_delay_microseconds: $QUEUE_DELAY_US }" >>"$dir/dyn/config.pbtxt"
  echo "$dir"
}

TICK=$(getconf CLK_TCK)
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cores() { awk -v a="$1" -v b="$2" -v t="$TICK" -v d="$3" 'BEGIN { printf "%.2f", (b - a) / t / d }'; }
PERF_ARGS="--input-data $WORK/data/mlp.data.json --input-tensor-format binary --output-tensor-format binary"
run_load() { # CONNS DURATION MODEL
  # shellcheck disable=SC2086
  perf_point "$3" "$PORT" "$1" "$2" $PERF_ARGS
}

declare -A RAW=() ROWS=() NOTES=() BUSY=()
for s in $SETUPS; do
  BUSY[$s]=$(cpu_busy)
  log "$s raw: raw_torch.py --threads ${s%x*} --intra ${s#*x}"
  while read -r _ kvs; do
    for kv in $kvs; do declare "${kv%%=*}=${kv#*=}"; done
    RAW[$s/$batch]=$rows_per_s
  done < <("$PYTHON" bench/pytorch/raw_torch.py "$WORK/data/model.pt" --threads "${s%x*}" \
    --intra "${s#*x}" --batches "$(tr ' ' ',' <<<"$RAW_BATCHES")" --duration "$RAW_DURATION" | grep '^RAW ')
  dir=$(repo "$s")
  "$OXISERVE_BIN" --model-repository="$dir" --http-port=$PORT --grpc-port=$((PORT + 1)) \
    --metrics-port=$((PORT + 2)) >"$WORK/server.$s.log" 2>&1 &
  SERVER_PID=$!
  await_ready "$PORT" "$SERVER_PID" 60 dyn nodyn || { log "server failed: $(server_log_tail "$WORK/server.$s.log")"; exit 1; }
  for m in dyn nodyn; do
    NOTES[$s/$m]="before: $("$PYTHON" bench/pytorch/check_answer.py "$PORT" "$m" "$WORK/data")"
    run_load 64 "$WARMUP" "$m" >/dev/null
    for c in $CONCURRENCY; do
      read -r i0 e0 <<<"$(model_counts "$PORT" "$m")"
      t0=$(proc_ticks "$SERVER_PID")
      out=$(run_load "$c" "$DURATION" "$m")
      t1=$(proc_ticks "$SERVER_PID")
      read -r i1 e1 <<<"$(model_counts "$PORT" "$m")"
      rps=– p50_us=– p99_us=– errors=– non2xx=– duration_s=1 tool_cpu_s=0
      for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done
      perf_cores=$(awk -v c="$tool_cpu_s" -v d="$duration_s" 'BEGIN { printf "%.2f", c / d }')
      server_cores=$(cores "$t0" "$t1" "$duration_s")
      ROWS[$s/$m/$c]="$rps $p50_us $p99_us $(ratio $((i1 - i0)) $((e1 - e0))) $server_cores $perf_cores $errors $non2xx"
      log "$s $m c=$c: $out batch=$(ratio $((i1 - i0)) $((e1 - e0))) server_cores=$server_cores perf_cores=$perf_cores"
    done
    NOTES[$s/$m]="${NOTES[$s/$m]}; after: $("$PYTHON" bench/pytorch/check_answer.py "$PORT" "$m" "$WORK/data")"
  done
  stop_server
done

{
  echo "# PyTorch backend throughput"
  echo
  echo "\`bench/pytorch_throughput.sh\` on $(date -u +%Y-%m-%d), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $TORCH (libtorch 2.13.0 in both)."
  echo "Settings: SETUPS=\"$SETUPS\" DURATION=$DURATION RAW_DURATION=$RAW_DURATION MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US."
  echo "Model: traced MLP 512 -> 1024 -> 1024 -> 512 (FP32, 4.2 MFLOP/row); one row per request."
  echo "Load: oxiserve-perf (crates/perf), one window of $DURATION per point after a $WARMUP warm-up window at 64 connections; C keep-alive connections with one request in flight each; the input row of make_model.py's request body, binary tensor extension, binary output. *Server CPUs*: the server's user + system time (\`/proc/PID/stat\`) over the oxiserve-perf run / its wall time; *perf CPUs*: oxiserve-perf's own (its report, from \`/proc/self/stat\`) / the same wall time."
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "SETUPS=\"$SETUPS\" DURATION=$DURATION WARMUP=$WARMUP RAW_DURATION=$RAW_DURATION RAW_BATCHES=\"$RAW_BATCHES\" CONCURRENCY=\"$CONCURRENCY\" MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US BUILD=$BUILD bench/pytorch_throughput.sh"
  echo "LIBTORCH=\$($PYTHON -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/torch cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PYTHON bench/pytorch/make_model.py \$WORK/data   # model.pt, the request body, torch's answer (\$WORK: the script's temporary folder)"
  echo "# per setup S = COUNTxINTRA: the raw baseline, then a fresh server holding dyn and nodyn (\$WORK/repo-\$S)"
  echo "$PYTHON bench/pytorch/raw_torch.py \$WORK/data/model.pt --threads \$COUNT --intra \$INTRA --batches $(tr ' ' ',' <<<"$RAW_BATCHES") --duration $RAW_DURATION"
  echo "$OXISERVE_BIN --model-repository=\$WORK/repo-\$S --http-port=$PORT --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2))"
  echo "$PYTHON bench/pytorch/check_answer.py $PORT \$M \$WORK/data   # M = dyn, nodyn; before and after the load"
  echo "# \$WORK/data/mlp.data.json: the input row of \$WORK/data/mlp.body as oxiserve-perf input data (perf_data in bench/lib/common.sh)"
  echo "# warm-up: the same at C = 64 for $WARMUP; around each run: curl -s http://127.0.0.1:$PORT/v2/models/\$M/stats"
  echo "$PERF -m \$M -u 127.0.0.1:$PORT -i http --concurrency-range \$C ${PERF_ARGS//$WORK\//\$WORK/} -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json   # C = $CONCURRENCY"
  echo '```'
  for s in $SETUPS; do
    echo
    echo "## ${s%x*} instance(s) x ${s#*x} intra-op thread(s)"
    echo
    echo "CPUs busy with other work before the setup ran: ${BUSY[$s]}."
    echo
    echo "Raw Python torch (${s%x*} thread(s) sharing the module, torch.set_num_threads(${s#*x})), rows/s by batch size:"
    echo
    echo "| batch | $(tr ' ' '\n' <<<"$RAW_BATCHES" | paste -sd'|' | sed 's/|/ | /g') |"
    echo "|---$(for _ in $RAW_BATCHES; do printf '|---'; done)|"
    echo "| rows/s | $(for b in $RAW_BATCHES; do printf '%s | ' "${RAW[$s/$b]:-–}"; done | sed 's/ | $//') |"
    echo
    echo "oxiserve (oxiserve-perf, one row per request):"
    echo
    echo "| batcher | connections | rows/s | p50 µs | p99 µs | avg batch | server CPUs | perf CPUs | errors | non-2xx |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for m in dyn nodyn; do
      for c in $CONCURRENCY; do
        read -r rps p50 p99 batch server_cores perf_cores errors non2xx <<<"${ROWS[$s/$m/$c]:-– – – – – – – –}"
        echo "| $([ $m = dyn ] && echo "dynamic" || echo "off") | $c | $rps | $p50 | $p99 | $batch | $server_cores | $perf_cores | $errors | $non2xx |"
      done
    done
    echo
    for m in dyn nodyn; do echo "- $m: ${NOTES[$s/$m]}"; done
  done
} >"$RESULTS"
log "results: $RESULTS"
