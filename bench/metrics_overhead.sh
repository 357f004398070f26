#!/usr/bin/env bash
# Cost of oxiserve's latency histograms (on by default) on the request path:
# the identity model over HTTP (the same model and request as http_identity.sh:
# KServe v2 JSON, the values of bench/data/identity_fp32_1x16.json) at 64
# connections, load from oxiserve-perf (crates/perf, one request in flight per
# connection), against oxiserve with and without
# --metrics-config=histogram_latencies=false. Each run starts a fresh server,
# warms it up and measures it; runs alternate (on, off, off, on, ...) so that
# drift in the machine's load hits both alike. Besides req/s and latency, the
# server's CPU time per request: its user + system time (/proc/PID/stat) over the
# whole oxiserve-perf run / the requests oxiserve-perf sent in it.
# bench/results/metrics_overhead.md gets the medians, the difference and every run.
#
#   RUNS=7 DURATION=10s CONNS=64 bench/metrics_overhead.sh
#
# Settings (environment): RUNS (7), DURATION (10s), WARMUP (3s), CONNS (64), BUILD (1: cargo
# build the release oxiserve and oxiserve-perf first; 0: use them as they are), RESULTS
# (bench/results/metrics_overhead.md).
#
# Ports: 18680-18682 (histograms on), 18690-18692 (histograms off).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNS=${CONNS:-64}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/metrics_overhead.md}
BODY_FILE=bench/data/identity_fp32_1x16.json
declare -A PORT=([on]=18680 [off]=18690) FLAGS=([on]="" [off]="--metrics-config=histogram_latencies=false")
declare -A PID=() CMD=()

WORK=$(mktemp -d -t metrics-overhead.XXXXXX)
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

for mode in on off; do
  p=${PORT[$mode]}
  CMD[$mode]="target/release/oxiserve --model-repository=\$REPO --http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))${FLAGS[$mode]:+ ${FLAGS[$mode]}}"
done
start_server() { # MODE: starts it and waits until it is ready
  ${CMD[$1]//\$REPO/$WORK/repo-oxiserve} >"$WORK/$1.log" 2>&1 &
  PID[$1]=$!
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$1]}/v2/health/ready")" = 200 ] && return
    kill -0 "${PID[$1]}" 2>/dev/null || { log "$1: exited: $(tail -n 3 "$WORK/$1.log")"; exit 1; }
    sleep 0.2
  done
  log "$1: not ready"; exit 1
}
scrape() { curl -s "http://127.0.0.1:$((PORT[$1] + 2))/metrics"; }

PERF_ARGS="--input-data $WORK/data.json --input-tensor-format json --output-tensor-format json"
run_load() { # PORT DURATION
  # shellcheck disable=SC2086
  perf_point identity "$1" "$CONNS" "$2" $PERF_ARGS
}
echo -e "mode\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tother_busy\tcpu_us" >"$WORK/runs.tsv"
CHECKS=()
for r in $(seq "$RUNS"); do
  order="on off"; [ $((r % 2)) = 0 ] && order="off on"
  for mode in $order; do
    # A fresh server per run, alone with oxiserve-perf (and whatever else runs here).
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
    # The histograms counted every successful request; without them there are none.
    text=$(scrape "$mode")
    count=$(awk '/^oxi_inference_request_duration_us_count/ { print $2 }' <<<"$text")
    success=$(awk '/^nv_inference_request_success/ { print $2 }' <<<"$text")
    CHECKS+=("$mode run $r: histogram count ${count:-none}, successes $success")
    stop_servers
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
  echo "# Cost of the latency histograms: identity model over HTTP, $CONNS connections"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), Linux $(uname -r); the server and oxiserve-perf share the CPUs; *CPUs busy before* is the share other processes kept busy in the 2 s before each run"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per setting, each on a fresh server after a $WARMUP warm-up window, alternating (on, off, off, on, ...); $CONNS keep-alive connections with one request in flight each; JSON, INPUT0 FP32 [1,16] with the values of \`$BODY_FILE\`, JSON output"
  echo "- Version: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS BUILD=$BUILD bench/metrics_overhead.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# per run, one of (\$REPO: one model 'identity', backend \"identity\", as in http_identity.sh)"
  for mode in on off; do echo "${CMD[$mode]}"; done
  echo "# then, P = ${PORT[on]} (on) or ${PORT[off]} (off): warm-up (D = ${WARMUP%s}000), measure (D = ${DURATION%s}000)"
  echo "# \$DATA: $BODY_FILE's values as oxiserve-perf input data: $(cat "$WORK/data.json")"
  echo "$PERF -m identity -u 127.0.0.1:\$P -i http --concurrency-range $CONNS ${PERF_ARGS//$WORK\/data.json/\$DATA} -p \$D -r 1 --json run.json"
  echo '```'
  echo
  echo "## Results (medians of $RUNS runs)"
  echo
  echo "| histograms | req/s | p50 µs | p90 µs | p99 µs | server CPU µs/request |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for mode in on off; do
    echo "| $mode | $(median "$mode" rps) | $(median "$mode" p50_us) | $(median "$mode" p90_us) | $(median "$mode" p99_us) | $(median "$mode" cpu_us) |"
  done
  echo
  echo "- req/s with histograms vs without: $(change "$(median on rps)" "$(median off rps)")"
  echo "- p50 with histograms vs without: $(change "$(median on p50_us)" "$(median off p50_us)")"
  echo "- server CPU time per request with histograms vs without: $(change "$(median on cpu_us)" "$(median off cpu_us)") (user + system time of the server process over the whole measuring oxiserve-perf run, from /proc/PID/stat, divided by the requests oxiserve-perf sent in it)"
  echo "- Check after each run (warm-up included): the histograms' \`_count\` equals the successes counted; none without histograms:"
  for check in "${CHECKS[@]}"; do echo "  - $check"; done
  echo
  echo "## All runs"
  echo
  echo "| histograms | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx | CPUs busy before | server CPU µs/request |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
