#!/usr/bin/env bash
# Cost of oxiserve's latency histograms (on by default) on the request path:
# the identity model over HTTP (the same model, body and wrk script as
# http_identity.sh) at 64 connections, against oxiserve with and without
# --metrics-config=histogram_latencies=false. Each run starts a fresh server,
# warms it up and measures it; runs alternate (on, off, off, on, ...) so that
# drift in the machine's load hits both alike. bench/results/metrics_overhead.md
# gets the medians, the difference and every run.
#
#   RUNS=7 DURATION=10s CONNS=64 bench/metrics_overhead.sh
#
# Ports: 18680-18682 (histograms on), 18690-18692 (histograms off).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNS=${CONNS:-64}
RESULTS=${RESULTS:-bench/results/metrics_overhead.md}
export BODY_FILE=bench/wrk/identity_fp32_1x16.json
LUA=bench/wrk/post_json.lua
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

command -v wrk >/dev/null || { apt-get update && apt-get install -y wrk; }
cargo build --release --locked --bin oxiserve

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

wrk_cmd() { # PORT DURATION
  echo "wrk -t2 -c$CONNS -d$2 -s $LUA http://127.0.0.1:$1/v2/models/identity/infer"
}
echo -e "mode\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tother_busy\tcpu_us" >"$WORK/runs.tsv"
CHECKS=()
for r in $(seq "$RUNS"); do
  order="on off"; [ $((r % 2)) = 0 ] && order="off on"
  for mode in $order; do
    # A fresh server per run, alone with wrk (and whatever else runs here).
    busy=$(cpu_busy)
    start_server "$mode"
    $(wrk_cmd "${PORT[$mode]}" "$WARMUP") >/dev/null
    t0=$(cpu_ticks "${PID[$mode]}")
    out=$($(wrk_cmd "${PORT[$mode]}" "$DURATION") | grep '^RESULT ')
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
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), Linux $(uname -r); the server and wrk share the CPUs; *CPUs busy before* is the share other processes kept busy in the 2 s before each run"
  echo "- Load: $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2), $RUNS runs of $DURATION per setting, each on a fresh server after a $WARMUP warm-up, alternating (on, off, off, on, ...); \`$BODY_FILE\` (FP32 [1,16])"
  echo "- Version: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "RUNS=$RUNS DURATION=$DURATION CONNS=$CONNS bench/metrics_overhead.sh"
  echo "cargo build --release --locked --bin oxiserve"
  echo "# per run, one of (\$REPO: one model 'identity', backend \"identity\", as in http_identity.sh)"
  for mode in on off; do echo "${CMD[$mode]}"; done
  echo "# then, P = ${PORT[on]} (on) or ${PORT[off]} (off): warm-up, measure"
  echo "BODY_FILE=$BODY_FILE $(wrk_cmd '$P' "$WARMUP")"
  echo "BODY_FILE=$BODY_FILE $(wrk_cmd '$P' "$DURATION")"
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
  echo "- server CPU time per request with histograms vs without: $(change "$(median on cpu_us)" "$(median off cpu_us)") (user + system time of the server process during the measured run, from /proc/PID/stat, divided by the requests wrk completed)"
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
