#!/usr/bin/env bash
# gRPC vs HTTP on the identity model (FP32 [1,16]), oxiserve and real Triton,
# with h2load (Debian's nghttp2-client) as the one load generator for both
# protocols: HTTP/1.1 JSON (`--h1`) and gRPC ModelInfer over HTTP/2 with raw
# contents. C connections with one request in flight each, C = 1, 8, 64;
# medians of RUNS runs of DURATION seconds; results in
# bench/results/grpc_vs_http.md. h2load reports mean latency, not percentiles.
#
#   RUNS=3 DURATION=10 bench/grpc_vs_http.sh
#
# Ports: 18330-18332 (oxiserve), 18340-18342 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
CONCURRENCY=${CONCURRENCY:-1 8 64}
RESULTS=${RESULTS:-bench/results/grpc_vs_http.md}
JSON_BODY=bench/wrk/identity_fp32_1x16.json
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

command -v h2load >/dev/null || { apt-get update && apt-get install -y --no-install-recommends nghttp2-client; }
scripts/python-env.sh
cargo build --release --locked --bin oxiserve
.venv/bin/python bench/h2load/make_grpc_body.py >"$WORK/grpc_body.bin"

. bench/lib/common.sh
make_identity_repos "$WORK"

start() { # TARGET
  local p=${PORT[$1]}
  local flags=(--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2)))
  case $1 in
    oxiserve) target/release/oxiserve --model-repository="$WORK/repo-oxiserve" "${flags[@]}" ;;
    triton) bash /work/shared/tools/real-triton.sh --model-repository="$WORK/repo-triton" "${flags[@]}" ;;
  esac >"$WORK/$1.log" 2>&1 &
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

# One h2load run; prints "rps mean_us failed".
load() { # PROTOCOL PORT C
  local out
  case $1 in
    http) out=$(h2load --h1 -c "$3" -m 1 -t $(( $3 < 2 ? 1 : 2 )) -D "$DURATION" --warm-up-time=1 \
      -H 'content-type: application/json' -d "$JSON_BODY" "http://127.0.0.1:$2/v2/models/identity/infer") ;;
    grpc) out=$(h2load -c "$3" -m 1 -t $(( $3 < 2 ? 1 : 2 )) -D "$DURATION" --warm-up-time=1 \
      -H 'content-type: application/grpc' -H 'te: trailers' -d "$WORK/grpc_body.bin" \
      "http://127.0.0.1:$(( $2 + 1 ))/inference.GRPCInferenceService/ModelInfer") ;;
  esac
  awk '/^finished in/ { for (i = 1; i <= NF; i++) if ($i ~ /req\/s/) rps = $(i - 1) }
       /^requests:/ { failed = $10 + 0 }
       /^time for request:/ { mean = $6 }
       END { unit = mean; sub(/[0-9.]+/, "", unit); v = mean + 0;
             if (unit == "ms") v *= 1000; if (unit == "s") v *= 1e6;
             printf "%s %.0f %d\n", rps, v, failed }' <<<"$out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

declare -A RPS MEAN
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
    done
  done
  stop_server
done

{
  echo "# gRPC vs HTTP: identity model, oxiserve and real Triton"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load generator and servers share the CPUs"
  echo "- Load: $(h2load --version | head -1), C connections x 1 request in flight, $RUNS runs of ${DURATION}s per point after 1 s warm-up; medians"
  echo "- HTTP: HTTP/1.1 JSON body \`$JSON_BODY\`; gRPC: \`ModelInfer\` with INPUT0 as raw contents (\`bench/h2load/make_grpc_body.py\`)"
  echo "- oxiserve $(git rev-parse --short HEAD); Triton 2.51.0 with a Python identity model (its only backend here)"
  echo
  echo "Command: \`RUNS=$RUNS DURATION=$DURATION bench/grpc_vs_http.sh\`"
  echo
  echo "| target | connections | HTTP req/s | gRPC req/s | gRPC/HTTP | HTTP mean µs | gRPC mean µs |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  for target in $TARGETS; do
    for c in $CONCURRENCY; do
      h=${RPS[$target,http,$c]:-}; g=${RPS[$target,grpc,$c]:-}
      [ -n "$h" ] || continue
      ratio=$(awk -v g="$g" -v h="$h" 'BEGIN { printf "%.2f", g / h }')
      echo "| $target | $c | $h | $g | $ratio | ${MEAN[$target,http,$c]} | ${MEAN[$target,grpc,$c]} |"
    done
  done
} >"$RESULTS"
log "wrote $RESULTS"
