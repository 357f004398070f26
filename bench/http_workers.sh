#!/usr/bin/env bash
# How the request path scales with HTTP workers (issue 29): the identity model over HTTP with
# binary tensors, oxiserve with --http-thread-count=W against the ceiling (bench/ceiling) with W
# runtime workers, for each W of WORKERS. The servers run on SERVER_CPUS and oxiserve-perf, with
# one thread per load CPU, on LOAD_CPUS (taskset), so each server's CPU time per request can be
# read beside its requests per second. On a machine of fewer than 4 CPUs nothing is pinned.
#
#   WORKERS="1 2 4 8" CONCURRENCY="64 256" RUNS=2 DURATION=3s bench/http_workers.sh
#
# Settings (environment): WORKERS (1, then powers of 2 up to the server CPUs), CONCURRENCY
# (64 256), RUNS (2), DURATION (3s), WARMUP (2s), SERVER_CPUS and LOAD_CPUS (the first and the
# second half of the CPUs), BUILD (1: cargo build the ceiling, oxiserve and oxiserve-perf first;
# 0: use them as they are), OXISERVE_BIN, CEILING_BIN, PERF (the binaries' paths), RESULTS
# (bench/results/http_workers.md).
# Ports: 18740-18741 (ceiling), 18750-18752 (oxiserve).
set -euo pipefail
cd "$(dirname "$0")/.."

CPUS=$(nproc)
if [ "$CPUS" -ge 4 ]; then
  SERVER_CPUS=${SERVER_CPUS:-0-$((CPUS / 2 - 1))}
  LOAD_CPUS=${LOAD_CPUS:-$((CPUS / 2))-$((CPUS - 1))}
fi
SERVER_CPUS=${SERVER_CPUS:-}
LOAD_CPUS=${LOAD_CPUS:-}
pinned_count() { # CPU LIST ("0-3,6"): how many CPUs it names; all of them when empty
  [ -n "$1" ] || { echo "$CPUS"; return; }
  tr ',' '\n' <<<"$1" | awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }'
}
SERVER_N=$(pinned_count "$SERVER_CPUS")
# oxiserve-perf: one thread per load CPU when it has CPUs of its own, else one.
PERF_THREADS=1
[ -z "$LOAD_CPUS" ] || PERF_THREADS=$(pinned_count "$LOAD_CPUS")
default_workers() { local w=1 out=1; while [ $((w * 2)) -le "$SERVER_N" ]; do w=$((w * 2)); out+=" $w"; done; echo "$out"; }
WORKERS=${WORKERS:-$(default_workers)}
CONCURRENCY=${CONCURRENCY:-64 256}
RUNS=${RUNS:-2}
DURATION=${DURATION:-3s}
WARMUP=${WARMUP:-2s}
BUILD=${BUILD:-1}
CEILING_BIN=${CEILING_BIN:-bench/ceiling/target/release/ceiling}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
RESULTS=${RESULTS:-bench/results/http_workers.md}
declare -A PORT=([ceiling]=18740 [oxiserve]=18750)
declare -A PIDS=()
. bench/lib/common.sh
TREE=$(tree_version) # before this run rewrites its results file

WORK=$(mktemp -d -t http-workers-bench.XXXXXX)
trap 'stop_servers; rm -rf "$WORK"' EXIT

if [ "$BUILD" = 1 ]; then
  cargo build --release --locked --manifest-path bench/ceiling/Cargo.toml
  cargo build --release --locked -p oxiserve -p oxiserve-perf
fi
for b in "$CEILING_BIN" "$OXISERVE_BIN" "$PERF"; do [ -x "$b" ] || { echo "missing $b (BUILD=1 builds it)" >&2; exit 1; }; done
# oxiserve-perf runs on LOAD_CPUS through a wrapper that perf_point (common.sh) calls as $PERF.
if [ -n "$LOAD_CPUS" ]; then
  printf '#!/bin/sh\nexec taskset -c %s %s "$@"\n' "$LOAD_CPUS" "$(realpath "$PERF")" >"$WORK/perf"
  chmod +x "$WORK/perf"
  PERF=$WORK/perf
fi
make_identity_repos "$WORK"
perf_data bench/data/identity_fp32_1x16.json "$WORK/data.json"

start() { # TARGET WORKERS: the target serving with WORKERS workers, pinned; its pid in PIDS
  local p=${PORT[$1]} cmd=()
  [ -z "$SERVER_CPUS" ] || cmd=(taskset -c "$SERVER_CPUS")
  case $1 in
    ceiling) cmd=(env TOKIO_WORKER_THREADS="$2" "${cmd[@]}" "$CEILING_BIN" --port "$p" --grpc-port $((p + 1))) ;;
    oxiserve) cmd+=("$OXISERVE_BIN" --model-repository="$WORK/repo-oxiserve" --http-port="$p" \
      --grpc-port=$((p + 1)) --metrics-port=$((p + 2)) --http-thread-count="$2") ;;
  esac
  "${cmd[@]}" >"$WORK/$1.$2.log" 2>&1 &
  PIDS[$1]=$!
  local deadline=$((SECONDS + 60))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/v2/models/identity/config" || true)" = 200 ]; do
    kill -0 "${PIDS[$1]}" 2>/dev/null && [ $SECONDS -lt $deadline ] || { echo "$1 did not start: $(server_log_tail "$WORK/$1.$2.log")" >&2; exit 1; }
    sleep 0.2
  done
}
answer_ok() { # PORT: one JSON request; OUTPUT0 must equal INPUT0
  curl -s -X POST -H 'Content-Type: application/json' --data-binary @bench/data/identity_fp32_1x16.json \
    "http://127.0.0.1:$1/v2/models/identity/infer" | python3 -c '
import json, sys
want = json.load(open("bench/data/identity_fp32_1x16.json"))["inputs"][0]["data"]
out = json.load(sys.stdin)["outputs"][0]
assert out["name"] == "OUTPUT0" and [float(v) for v in out["data"]] == want, out'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
point() { # TARGET CONNS DURATION: one window; prints rps p50_us server_cpus us_per_request
  local pid=${PIDS[$1]} t0 t1 line
  t0=$(cpu_ticks "$pid")
  line=$(perf_point identity "${PORT[$1]}" "$2" "$3" --input-data "$WORK/data.json" \
    --input-tensor-format binary --output-tensor-format binary --worker-threads "$PERF_THREADS")
  t1=$(cpu_ticks "$pid")
  [ -n "$line" ] || { echo "- - - -"; return; }
  awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v line="$line" 'BEGIN {
    n = split(line, f, " "); for (i = 2; i <= n; i++) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
    cpu = t / hz; printf "%.0f %d %.2f %.1f\n", v["rps"], v["p50_us"], cpu / v["duration_s"], 1e6 * cpu / v["requests"] }'
}

echo -e "workers\ttarget\tconns\trun\trps\tp50_us\tserver_cpus\tus_per_request" >"$WORK/runs.tsv"
for w in $WORKERS; do
  for t in ceiling oxiserve; do start "$t" "$w"; answer_ok "${PORT[$t]}"; point "$t" 64 "$WARMUP" >/dev/null; done
  for c in $CONCURRENCY; do
    for r in $(seq "$RUNS"); do
      for t in $(run_order "$r" ceiling oxiserve); do
        read -r rps p50 cpus us < <(point "$t" "$c" "$DURATION")
        log "W=$w $t C=$c run $r: $rps req/s, p50 $p50 us, server $cpus CPUs, $us us/request"
        echo -e "$w\t$t\t$c\t$r\t$rps\t$p50\t$cpus\t$us" >>"$WORK/runs.tsv"
      done
    done
  done
  stop_servers
done

median() { runs_median "$WORK/runs.tsv" "$@"; }
median_tenths() { runs_median_format %.1f "$WORK/runs.tsv" "$@"; }
{
  echo "# Request path by HTTP worker count: identity model, HTTP with binary tensors"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(machine_line); servers on CPUs ${SERVER_CPUS:-all} ($SERVER_N), oxiserve-perf on CPUs ${LOAD_CPUS:-all} ($PERF_THREADS oxiserve-perf threads)"
  echo "- Versions: oxiserve $TREE"
  echo "- Load: oxiserve-perf, $RUNS run(s) of one $DURATION window per point, alternating between the two servers; one request in flight per connection; INPUT0 FP32 [1,16] in the binary tensor extension, OUTPUT0 asked as binary"
  echo "- Server CPU: user + system time of the server process over the whole oxiserve-perf process (/proc/PID/stat), divided by its wall time (CPUs) and by every request it sent (µs/request)"
  echo "- ceiling: \`bench/ceiling\` with \`TOKIO_WORKER_THREADS=W\`; oxiserve: \`--http-thread-count=W\`, model \`identity\` (\`backend: \"identity\"\`, one instance)"
  echo
  echo "## Medians"
  echo
  echo "| workers | connections | ceiling req/s | oxiserve req/s | oxiserve/ceiling | ceiling CPUs | oxiserve CPUs | ceiling µs/request | oxiserve µs/request | ceiling p50 µs | oxiserve p50 µs |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for w in $WORKERS; do for c in $CONCURRENCY; do
    cr=$(median rps workers="$w" target=ceiling conns="$c"); orr=$(median rps workers="$w" target=oxiserve conns="$c")
    echo "| $w | $c | $cr | $orr | $(ratio "$orr" "$cr") | $(median_tenths server_cpus workers="$w" target=ceiling conns="$c") | $(median_tenths server_cpus workers="$w" target=oxiserve conns="$c") | $(median_tenths us_per_request workers="$w" target=ceiling conns="$c") | $(median_tenths us_per_request workers="$w" target=oxiserve conns="$c") | $(median p50_us workers="$w" target=ceiling conns="$c") | $(median p50_us workers="$w" target=oxiserve conns="$c") |"
  done; done
  echo
  echo "## All runs"
  echo
  echo "| workers | target | connections | run | req/s | p50 µs | server CPUs | µs/request |"
  echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  runs_rows "$WORK/runs.tsv"
  echo
  echo "## Command"
  echo
  echo '```sh'
  echo "WORKERS=\"$WORKERS\" CONCURRENCY=\"$CONCURRENCY\" RUNS=$RUNS DURATION=$DURATION SERVER_CPUS=$SERVER_CPUS LOAD_CPUS=$LOAD_CPUS BUILD=$BUILD bench/http_workers.sh"
  echo '```'
} >"$RESULTS"
log "results: $RESULTS"
