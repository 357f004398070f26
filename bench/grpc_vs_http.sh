#!/usr/bin/env bash
# gRPC vs HTTP on the identity model (FP32 [1,16]), oxiserve and real Triton,
# with oxiserve-perf (crates/perf) as the one load generator for both
# protocols: HTTP/1.1 with JSON tensors and gRPC ModelInfer with raw
# contents, the values of bench/data/identity_fp32_1x16.json. C connections
# with one request in flight each, C = 1, 8, 64; each run is one measurement
# window of DURATION seconds after WARMUP requests; medians of RUNS runs;
# results in bench/results/grpc_vs_http.md.
#
#   RUNS=3 DURATION=10 bench/grpc_vs_http.sh
#
# Ports: 18330-18332 (oxiserve), 18340-18342 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2000}
CONCURRENCY=${CONCURRENCY:-1 8 64}
RESULTS=${RESULTS:-bench/results/grpc_vs_http.md}
JSON_BODY=bench/data/identity_fp32_1x16.json
declare -A PORT=([oxiserve]=18330 [triton]=18340)
WORK=$(mktemp -d -t grpc-http-bench.XXXXXX)
SERVER_PID=
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT
log() { echo "[bench] $*" >&2; }

scripts/python-env.sh
# Built one at a time: together, cargo would unify hyper's features and rebuild the server.
cargo build --release --locked --bin oxiserve
cargo build --release --locked -p oxiserve-perf
python3 -c 'import json, sys; body = json.load(open(sys.argv[1]))
print(json.dumps({"data": [{"INPUT0": body["inputs"][0]["data"]}]}))' "$JSON_BODY" >"$WORK/input.json"

. bench/lib/common.sh
make_identity_repos "$WORK"

start() { # TARGET
  local p=${PORT[$1]}
  local flags=(--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2)))
  local cmd
  case $1 in
    oxiserve) cmd=(target/release/oxiserve --model-repository="$WORK/repo-oxiserve" "${flags[@]}") ;;
    triton) cmd=(bash /work/shared/tools/real-triton.sh --model-repository="$WORK/repo-triton" "${flags[@]}") ;;
  esac
  # Started directly (not in a subshell), so that SERVER_PID is the server
  # (real-triton.sh execs tritonserver) and stop_server stops it.
  "${cmd[@]}" >"$WORK/$1.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$p/v2/health/ready" >/dev/null && return 0
    sleep 0.5
  done
  return 1
}

# The same answer over both protocols before anything is measured.
check() { # PORT
  .venv/bin/python - "$1" <<'PY'
import sys, numpy as np, tritonclient.grpc as g, tritonclient.http as h
port = int(sys.argv[1])
x = np.arange(16, dtype=np.float32).reshape(1, 16)
for mod, url in ((h, f"127.0.0.1:{port}"), (g, f"127.0.0.1:{port + 1}")):
    client = mod.InferenceServerClient(url)
    inp = mod.InferInput("INPUT0", [1, 16], "FP32")
    inp.set_data_from_numpy(x)
    assert (client.infer("identity", [inp]).as_numpy("OUTPUT0") == x).all()
PY
}

# One oxiserve-perf run; prints "rps mean_us p50_us p99_us errors".
load() { # PROTOCOL PORT C
  local port=$2
  [ "$1" = grpc ] && port=$(($2 + 1))
  target/release/oxiserve-perf -m identity -u "127.0.0.1:$port" -i "$1" --concurrency-range "$3" \
    --input-data "$WORK/input.json" --input-tensor-format json --output-tensor-format json \
    --warmup-request-count "$WARMUP" -p $((DURATION * 1000)) -r 1 --json "$WORK/run.json" >/dev/null
  python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["points"][0]; l = p["latency_us"]
print("%.1f %.0f %d %d %d" % (p["requests_per_second"], l["avg"], l["p50"], l["p99"], p["errors"]))' "$WORK/run.json"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

declare -A RPS MEAN P99
for target in $TARGETS; do
  log "$target: starting"
  start "$target" || { log "$target did not start"; tail -20 "$WORK/$target.log"; stop_server; continue; }
  check "${PORT[$target]}"
  for proto in http grpc; do
    for c in $CONCURRENCY; do
      runs=()
      for r in $(seq "$RUNS"); do
        line=$(load "$proto" "${PORT[$target]}" "$c")
        log "$target $proto c=$c run $r: $line"
        runs+=("$line")
      done
      RPS[$target,$proto,$c]=$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | median)
      MEAN[$target,$proto,$c]=$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | median)
      P99[$target,$proto,$c]=$(printf '%s\n' "${runs[@]}" | awk '{ print $4 }' | median)
    done
  done
  stop_server
done

{
  echo "# gRPC vs HTTP: identity model, oxiserve and real Triton"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load generator and servers share the CPUs"
  echo "- Load: oxiserve-perf (\`target/release/oxiserve-perf ... --concurrency-range C -p $((DURATION * 1000)) -r 1 --warmup-request-count $WARMUP\`), C connections x 1 request in flight, $RUNS runs of one ${DURATION}s window per point after $WARMUP warm-up requests; medians"
  echo "- HTTP: HTTP/1.1 with JSON tensors (the values of \`$JSON_BODY\`); gRPC: \`ModelInfer\` with INPUT0 as raw contents"
  echo "- oxiserve $(git rev-parse --short HEAD); Triton 2.51.0 with a Python identity model (its only backend here)"
  echo
  echo "Command: \`RUNS=$RUNS DURATION=$DURATION bench/grpc_vs_http.sh\`"
  echo
  echo "| target | connections | HTTP req/s | gRPC req/s | gRPC/HTTP | HTTP mean µs | gRPC mean µs | HTTP p99 µs | gRPC p99 µs |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for target in $TARGETS; do
    for c in $CONCURRENCY; do
      h=${RPS[$target,http,$c]:-}; g=${RPS[$target,grpc,$c]:-}
      [ -n "$h" ] || continue
      ratio=$(awk -v g="$g" -v h="$h" 'BEGIN { printf "%.2f", g / h }')
      echo "| $target | $c | $h | $g | $ratio | ${MEAN[$target,http,$c]} | ${MEAN[$target,grpc,$c]} | ${P99[$target,http,$c]} | ${P99[$target,grpc,$c]} |"
    done
  done
} >"$RESULTS"
log "wrote $RESULTS"
