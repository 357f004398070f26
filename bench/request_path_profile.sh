#!/usr/bin/env bash
# Where oxiserve's CPU goes per request, stage by stage: the identity model (INPUT0 FP32 [16]
# -> OUTPUT0, oxiserve's identity backend, no batching) served by target/release/oxiserve,
# loaded by oxiserve-perf (one request in flight per connection) in each protocol:
#   json   - KServe v2 over HTTP/1.1, JSON tensors
#   binary - KServe v2 over HTTP/1.1, the binary tensor extension for inputs and outputs
#   grpc   - KServe v2 gRPC ModelInfer, raw input contents
# While a load window runs, `perf record -g -p <server>` samples the server for RECORD
# seconds; bench/lib/perf_stages.py puts each sample in a stage of the request path
# (system call first, else the leaf function's crate) and gives µs of server CPU per request.
# The results (bench/results/request_path_profile.md) back docs/design/request-path.md.
#
#   bench/request_path_profile.sh
#   PROTOCOLS=json CONCURRENCY=64 RECORD=3 bench/request_path_profile.sh   # one point
#
# Settings (environment): PROTOCOLS (json binary grpc), CONCURRENCY (1 64), RECORD (5 s),
# FREQ (4999 Hz), BUILD (1: cargo build the release server and load generator first),
# RESULTS (bench/results/request_path_profile.md).
# Needs `perf` (Debian: linux-perf; installed by the script when missing).
# Ports: 18610-18612.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOCOLS=${PROTOCOLS:-json binary grpc}
CONCURRENCY=${CONCURRENCY:-1 64}
RECORD=${RECORD:-5}
FREQ=${FREQ:-4999}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/request_path_profile.md}
PORT=18610
WORK=$(mktemp -d -t request-path-profile.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
if [ "$BUILD" = 1 ]; then cargo build --release --locked -p oxiserve -p oxiserve-perf; fi
make_identity_repos "$WORK"
perf_data bench/data/identity_fp32_1x16.json "$WORK/data.json"

load_args() { # PROTOCOL: oxiserve-perf's protocol, port and tensor format arguments
  case $1 in
    json) echo "-u 127.0.0.1:$PORT --input-tensor-format json --output-tensor-format json" ;;
    binary) echo "-u 127.0.0.1:$PORT --input-tensor-format binary --output-tensor-format binary" ;;
    grpc) echo "-i grpc -u 127.0.0.1:$((PORT + 1))" ;;
  esac
}

target/release/oxiserve --model-repository="$WORK/repo-oxiserve" --http-port=$PORT \
  --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2)) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
await_ready $PORT "$SERVER_PID" 60 identity
busy=$(cpu_busy)
{
  echo "# The request path's CPU, stage by stage (identity model, oxiserve)"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); oxiserve $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (uncommitted changes)')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), Linux $(uname -r); the server and oxiserve-perf share the CPUs; other processes kept them $busy busy before the start"
  echo "- Each point: oxiserve-perf for $((RECORD + 4)) s; after 2 s, \`perf record -F $FREQ -g -p <server pid> -- sleep $RECORD\`; requests in the recording = the window's req/s x $RECORD s"
  echo "- Stages: \`bench/lib/perf_stages.py\` (a sample in a system call counts for that call, else for its leaf function's crate); \"idle polling\" and \"sleep and wake-up\" are the cost of handing a request to the instance thread"
  echo
  echo '```sh'
  echo "PROTOCOLS=\"$PROTOCOLS\" CONCURRENCY=\"$CONCURRENCY\" RECORD=$RECORD FREQ=$FREQ bench/request_path_profile.sh"
  echo '```'
  for p in $PROTOCOLS; do
    for c in $CONCURRENCY; do
      # shellcheck disable=SC2046
      "$PERF" -m identity $(load_args "$p") --concurrency-range "$c" --input-data "$WORK/data.json" \
        -p $(((RECORD + 4) * 1000)) -r 1 --json "$WORK/load.json" >/dev/null 2>&1 &
      load=$!
      sleep 2
      perf record -F "$FREQ" -g -p "$SERVER_PID" -o "$WORK/perf.data" -- sleep "$RECORD" >/dev/null 2>&1
      wait $load
      rps=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["points"][0]["requests_per_second"])' "$WORK/load.json")
      log "$p at $c connections: $rps req/s"
      echo
      echo "## $p, $c connection$([ "$c" = 1 ] || echo s): $(printf '%.0f' "$rps") req/s"
      echo
      perf script -i "$WORK/perf.data" -F comm,ip,sym 2>/dev/null |
        python3 bench/lib/perf_stages.py "$FREQ" "$(python3 -c "print($rps * $RECORD)")"
    done
  done
} >"$WORK/results.md"
mv "$WORK/results.md" "$RESULTS"
log "wrote $RESULTS"
