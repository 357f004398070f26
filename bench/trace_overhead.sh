#!/usr/bin/env bash
# Cost of tracing on the request path: the identity model over HTTP (the same
# model and request as http_identity.sh: KServe v2 JSON, the values of
# bench/data/identity_fp32_1x16.json) at 64 connections, load from oxiserve-perf
# (crates/perf, one request in flight per connection), against oxiserve with
# tracing off, with Triton-mode tracing at rate=1000 (TIMESTAMPS into a trace
# file), and with OpenTelemetry tracing at rate=1000 (spans to a collector that
# refuses connections: the sampling, the records and the spans cost the same,
# the export fails off the request path). Each run starts a fresh server, warms
# it up and measures it; the modes rotate per run so that drift in the machine's
# load hits all alike. Besides req/s and latency, the server's CPU time per
# request: its user + system time (/proc/PID/stat) over the whole oxiserve-perf run
# / the requests oxiserve-perf sent in it. After each Triton-mode run the trace file
# is checked: one trace in 1000 requests. bench/results/trace_overhead.md gets the
# medians, the ratios to tracing off and every run.
#
#   RUNS=5 DURATION=10s CONNS=64 bench/trace_overhead.sh
#
# Settings (environment): RUNS (5), DURATION (10s), WARMUP (3s), CONNS (64), MODES
# ("off triton otel"), BUILD (1: cargo build the release oxiserve and oxiserve-perf
# first; 0: use them as they are), RESULTS (bench/results/trace_overhead.md).
#
# Ports: 18700-18702 (off), 18710-18712 (triton), 18720-18722 (otel), 18729 (the
# refusing collector: nothing listens there).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNS=${CONNS:-64}
MODES=${MODES:-off triton otel}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/trace_overhead.md}
BODY_FILE=bench/data/identity_fp32_1x16.json
declare -A PORT=([off]=18700 [triton]=18710 [otel]=18720)
declare -A FLAGS=(
  [off]=""
  [triton]="--trace-config=triton,file=\$WORK/trace.json --trace-config=level=TIMESTAMPS --trace-config=rate=1000"
  [otel]="--trace-config=mode=opentelemetry --trace-config=opentelemetry,url=http://127.0.0.1:18729/v1/traces --trace-config=level=TIMESTAMPS --trace-config=rate=1000"
)
declare -A PID=() CMD=()

WORK=$(mktemp -d -t trace-overhead.XXXXXX)
stop_servers() {
  for mode in "${!PID[@]}"; do kill -TERM "${PID[$mode]}" 2>/dev/null || true; done
  for mode in "${!PID[@]}"; do wait "${PID[$mode]}" 2>/dev/null || true; done
  PID=()
}
trap 'stop_servers; rm -rf "$WORK"' EXIT
log() { echo "[bench] $*" >&2; }
cpu_ticks() { # PID: user + system CPU time of the process so far, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
TICK=$(getconf CLK_TCK)

. bench/lib/common.sh
make_identity_repos "$WORK"
perf_data "$BODY_FILE" "$WORK/data.json"

if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve; fi
ensure_perf "$BUILD"

for mode in $MODES; do
  p=${PORT[$mode]}
  CMD[$mode]="target/release/oxiserve --model-repository=\$REPO --http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))${FLAGS[$mode]:+ ${FLAGS[$mode]}}"
done
start_server() { # MODE: starts it and waits until it is ready
  local cmd=${CMD[$1]//\$REPO/$WORK/repo-oxiserve}
  ${cmd//\$WORK/$WORK} >"$WORK/$1.log" 2>&1 &
  PID[$1]=$!
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$1]}/v2/health/ready")" = 200 ] && return
    kill -0 "${PID[$1]}" 2>/dev/null || { log "$1: exited: $(tail -n 3 "$WORK/$1.log")"; exit 1; }
    sleep 0.2
  done
  log "$1: not ready"; exit 1
}
successes() { # MODE: the requests the server answered successfully so far
  curl -s "http://127.0.0.1:$((PORT[$1] + 2))/metrics" | awk '/^nv_inference_request_success/ { print $2 }'
}

PERF_ARGS="--input-data $WORK/data.json --input-tensor-format json --output-tensor-format json"
run_load() { # PORT DURATION
  # shellcheck disable=SC2086
  perf_point identity "$1" "$CONNS" "$2" $PERF_ARGS
}
echo -e "mode\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tother_busy\tcpu_us" >"$WORK/runs.tsv"
CHECKS=()
read -ra ORDER <<<"$MODES"
for r in $(seq "$RUNS"); do
  # Rotate the order: each mode goes first, in the middle and last in turn.
  shift_by=$(((r - 1) % ${#ORDER[@]}))
  order=("${ORDER[@]:$shift_by}" "${ORDER[@]:0:$shift_by}")
  for mode in "${order[@]}"; do
    # A fresh server per run, alone with oxiserve-perf (and whatever else runs here).
    rm -f "$WORK"/trace.json*
    busy=$(cpu_busy)
    start_server "$mode"
    run_load "${PORT[$mode]}" "$WARMUP" >/dev/null
    t0=$(cpu_ticks "${PID[$mode]}")
    out=$(run_load "${PORT[$mode]}" "$DURATION" | grep '^RESULT ') ||
      { log "$mode run $r: oxiserve-perf gave no result"; exit 1; }
    t1=$(cpu_ticks "${PID[$mode]}")
    for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done
    # The server's CPU time per request: less sensitive to other load than req/s.
    cpu_us=$(awk -v t="$((t1 - t0))" -v hz="$TICK" -v n="$requests" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
    log "$mode run $r (CPUs $busy busy before): $out server_cpu_us_per_req=$cpu_us"
    echo -e "$mode\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx\t$busy\t$cpu_us" >>"$WORK/runs.tsv"
    answered=$(successes "$mode")
    stop_servers
    if [ "$mode" = triton ]; then
      # The trace file is written at exit: one trace per 1000 requests (warm-up included).
      traced=$(python3 -c 'import json, sys; print(len({e["id"] for e in json.load(open(sys.argv[1]))}))' "$WORK/trace.json")
      CHECKS+=("triton run $r: $traced traces in the file for $answered successful requests")
    elif [ "$mode" = otel ]; then
      warned=$(grep -c 'cannot export trace spans' "$WORK/otel.log" || true)
      CHECKS+=("otel run $r: $answered successful requests; export-failure warnings logged: $warned")
    fi
  done
done

median() { # MODE COLUMN
  awk -F'\t' -v m="$1" -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == m { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.6g", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
change() { awk -v on="$1" -v off="$2" 'BEGIN { printf "%+.1f%%", 100 * (on - off) / off }'; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Cost of tracing at rate=1000: identity model over HTTP, $CONNS connections"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), Linux $(uname -r); the server and oxiserve-perf share the CPUs; *CPUs busy before* is the share other processes kept busy in the 2 s before each run"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per mode, each on a fresh server after a $WARMUP warm-up window, the modes' order rotating from run to run; $CONNS keep-alive connections with one request in flight each; JSON, INPUT0 FP32 [1,16] with the values of \`$BODY_FILE\`, JSON output"
  echo "- Version: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS MODES=\"$MODES\" BUILD=$BUILD bench/trace_overhead.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# per run, one of (\$REPO: one model 'identity', backend \"identity\", as in http_identity.sh; \$WORK: a temporary folder)"
  for mode in $MODES; do echo "${CMD[$mode]}"; done
  echo "# then, P = the mode's HTTP port: warm-up (D = ${WARMUP%s}000), measure (D = ${DURATION%s}000)"
  echo "# \$DATA: $BODY_FILE's values as oxiserve-perf input data: $(cat "$WORK/data.json")"
  echo "$PERF -m identity -u 127.0.0.1:\$P -i http --concurrency-range $CONNS ${PERF_ARGS//$WORK\/data.json/\$DATA} -p \$D -r 1 --json run.json"
  echo '```'
  echo
  echo "## Results (medians of $RUNS runs)"
  echo
  echo "| tracing | req/s | p50 µs | p90 µs | p99 µs | server CPU µs/request | req/s vs off | CPU/request vs off |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for mode in $MODES; do
    vs_rps=$(change "$(median "$mode" rps)" "$(median off rps)")
    vs_cpu=$(change "$(median "$mode" cpu_us)" "$(median off cpu_us)")
    echo "| $mode | $(median "$mode" rps) | $(median "$mode" p50_us) | $(median "$mode" p90_us) | $(median "$mode" p99_us) | $(median "$mode" cpu_us) | $vs_rps | $vs_cpu |"
  done
  echo
  echo "- Goal: with tracing on at rate=1000, req/s within 5% of tracing off."
  echo "- When other processes keep the CPUs busy (*CPUs busy before* in the runs), req/s follows their load more than the setting's; the server's CPU time per request much less so."
  echo "- server CPU time per request: user + system time of the server process over the whole measuring oxiserve-perf run, from /proc/PID/stat, divided by the requests oxiserve-perf sent in it."
  echo "- Checks after each run (warm-up included):"
  for check in "${CHECKS[@]}"; do echo "  - $check"; done
  echo
  echo "## All runs"
  echo
  echo "| tracing | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx | CPUs busy before | server CPU µs/request |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
