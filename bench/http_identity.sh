#!/usr/bin/env bash
# HTTP benchmark of the identity model (KServe v2 JSON over HTTP/1.1, load from oxiserve-perf)
# against:
#   ceiling  - bench/ceiling: bare axum server that only parses the JSON and echoes it back
#              (and answers the model's metadata and configuration, static, for oxiserve-perf)
#   oxiserve - target/release/oxiserve serving an identity-backend model
#   triton   - real Triton (/work/shared/tools/real-triton.sh) serving a Python identity model
# Each target in turn: build, start, wait for readiness, check one answer, warm up, then one
# oxiserve-perf window (crates/perf; one request in flight per connection, the values of
# bench/data/identity_fp32_1x16.json as JSON) at each concurrency RUNS times; finally
# bench/results/http_identity.md gets medians and ratios.
#
#   TARGETS="ceiling oxiserve triton" RUNS=3 DURATION=10s bench/http_identity.sh
#
# Settings (environment): TARGETS, RUNS (3), DURATION (10s), WARMUP (3s), CONCURRENCY (1 8 64),
# READY_TIMEOUT (300 s), BUILD (1: cargo build oxiserve-perf and the targets first; 0: use the
# binaries as they are), RESULTS (bench/results/http_identity.md).
#
# A target that fails to build or start is reported in the results, not fatal.
# Ports: 18300 (ceiling), 18310-18312 (oxiserve), 18320-18322 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-ceiling oxiserve triton}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 8 64}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/http_identity.md}
BODY_FILE=bench/data/identity_fp32_1x16.json
TRITON_SH=/work/shared/tools/real-triton.sh
declare -A PORT=([ceiling]=18300 [oxiserve]=18310 [triton]=18320)
declare -A STATUS=() CMD=() VERSION=() BUSY=()

WORK=$(mktemp -d -t http-identity-bench.XXXXXX)
SERVER_PID=
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT
log() { echo "[bench] $*" >&2; }

# --- model repositories: the same config, backend "identity" or "python" -----------------
. bench/lib/common.sh
make_identity_repos "$WORK"
perf_data "$BODY_FILE" "$WORK/data.json"

# --- per-target build, start command, readiness -------------------------------------------
build() { # TARGET
  case $1 in
    ceiling) if [ "$BUILD" = 1 ]; then cargo build --release --locked --manifest-path bench/ceiling/Cargo.toml; fi
      [ -x bench/ceiling/target/release/ceiling ] ;;
    oxiserve) if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve; fi
      [ -x target/release/oxiserve ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
set_cmd() { # TARGET: the server command line, in CMD[TARGET]
  local p=${PORT[$1]} ports="--http-port=${PORT[$1]} --grpc-port=$((PORT[$1] + 1)) --metrics-port=$((PORT[$1] + 2))"
  case $1 in
    ceiling) CMD[$1]="bench/ceiling/target/release/ceiling --port $p" ;;
    oxiserve) CMD[$1]="target/release/oxiserve --model-repository=$WORK/repo-oxiserve $ports" ;;
    triton) CMD[$1]="bash $TRITON_SH --model-repository=$WORK/repo-triton $ports" ;;
  esac
}
wait_ready() { # TARGET: 200 on /v2/health/ready (the ceiling: any HTTP answer), then one right answer
  local base="http://127.0.0.1:${PORT[$1]}" code deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "exited before ready"; return 1; }
    code=$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/health/ready" || true)
    [ "$code" = 200 ] || { [ "$1" = ceiling ] && [ "$code" != 000 ]; } && break
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${READY_TIMEOUT}s"; return 1; }
    sleep 0.5
  done
  curl -s -X POST -H 'Content-Type: application/json' --data-binary "@$BODY_FILE" \
    "$base/v2/models/identity/infer" >"$WORK/answer.json" || true
  python3 - "$BODY_FILE" "$WORK/answer.json" <<'EOF' || { echo "wrong answer: $(head -c 300 "$WORK/answer.json")"; return 1; }
import json, sys
req, ans = (json.load(open(p)) for p in sys.argv[1:])
out = ans["outputs"][0]
assert out["name"] == "OUTPUT0" and out["shape"] == [1, 16] and out["datatype"] == "FP32"
assert [float(x) for x in out["data"]] == req["inputs"][0]["data"]
EOF
}

# --- benchmark ------------------------------------------------------------------------------
echo -e "target\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx" >"$WORK/runs.tsv"
PERF_ARGS="--input-data $WORK/data.json --input-tensor-format json --output-tensor-format json"
run_load() { # CONNS PORT DURATION
  # shellcheck disable=SC2086
  perf_point identity "$2" "$1" "$3" $PERF_ARGS
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
for t in $TARGETS; do
  [ -n "${PORT[$t]:-}" ] || { log "unknown target '$t'"; exit 2; }
  set_cmd "$t"
  BUSY[$t]=$(cpu_busy)
  log "$t: prepare (CPUs ${BUSY[$t]} busy with other work)"
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    STATUS[$t]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; log "${STATUS[$t]}"; continue
  fi
  log "$t: ${CMD[$t]}"
  ${CMD[$t]} >"$WORK/$t.log" 2>&1 &
  SERVER_PID=$!
  if ! why=$(wait_ready "$t"); then
    STATUS[$t]="failed to start ($why); server log: $(grep -v '^[|+]' "$WORK/$t.log" | tail -n 3 | tr '\n' ' ')"
    log "${STATUS[$t]}"; stop_server; continue
  fi
  VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
  log "$t: warm-up ($WARMUP at $max_conns connections)"
  run_load "$max_conns" "${PORT[$t]}" "$WARMUP" >/dev/null
  STATUS[$t]=ok
  for c in $CONCURRENCY; do
    for r in $(seq "$RUNS"); do
      out=$(run_load "$c" "${PORT[$t]}" "$DURATION" | grep '^RESULT ' || true)
      [ -n "$out" ] || { STATUS[$t]="ok, except: oxiserve-perf gave no result at $c connections, run $r"; continue; }
      log "$t c=$c run $r: $out"
      for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
      echo -e "$t\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx" >>"$WORK/runs.tsv"
    done
  done
  stop_server
done

# --- report ---------------------------------------------------------------------------------
median() { # TARGET CONNS COLUMN -> median over runs, or empty
  awk -F'\t' -v t="$1" -v c="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t && $2 == c { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
total() { awk -F'\t' -v t="$1" -v c="$2" '$1 == t && $2 == c { n += $8 + $9 } END { print n + 0 }' "$WORK/runs.tsv"; }
goal() { # LABEL VALUE LIMIT OP(ge|le)
  [ "$2" != "–" ] || { echo "- $1: not measured"; return; }
  awk -v v="$2" -v l="$3" -v op="$4" -v label="$1" 'BEGIN { ok = op == "ge" ? v >= l : v <= l
    printf "- %s: %s (%s %s) -> **%s**\n", label, v, op == "ge" ? ">=" : "<=", l, ok ? "met" : "NOT met" }'
}
declare -A RPS=() P50=()
for t in ceiling oxiserve triton; do
  for c in $CONCURRENCY; do RPS[$t/$c]=$(median "$t" "$c" rps); P50[$t/$c]=$(median "$t" "$c" p50_us); done
done
lo=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | head -n 1)
hi=$max_conns
complete=yes
for t in ceiling oxiserve triton; do [[ ${STATUS[$t]:-} == ok* ]] || complete=no; done

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# HTTP benchmark: identity model, KServe v2 JSON"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\"): see *Targets* for the targets not measured."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); servers and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $hi connections; C keep-alive connections with one request in flight each; the same request for all targets: JSON, INPUT0 FP32 [1,16] with the values of \`$BODY_FILE\`, JSON output (oxiserve-perf reads \`GET /v2/models/identity\` and \`/config\` first; the ceiling answers them with static JSON)"
  echo "- At 1 connection, latency depends on whether the scheduler puts oxiserve-perf and the server on the same CPU (see bench/README.md): compare runs in *All runs*"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)'), Triton ${VERSION[triton]:-?} (Python backend), ceiling axum $(awk '/^name = "axum"/ { getline; print $3 }' bench/ceiling/Cargo.lock | tr -d '"')"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" BUILD=$BUILD bench/http_identity.sh"
  echo "# builds$([ "$BUILD" = 1 ] || echo ' (not run: BUILD=0)')"
  echo "cargo build --release --locked -p oxiserve-perf"
  echo "cargo build --release --locked --manifest-path bench/ceiling/Cargo.toml"
  echo "cargo build --release --locked --bin oxiserve"
  echo "# servers, one at a time (REPO_*: temporary model repositories, see below)"
  for t in ceiling oxiserve triton; do
    set_cmd "$t"; echo "${CMD[$t]}" | sed "s|$WORK/repo-oxiserve|\$REPO_OXISERVE|; s|$WORK/repo-triton|\$REPO_TRITON|"
  done
  echo "# load: port P = ${PORT[ceiling]}, ${PORT[oxiserve]}, ${PORT[triton]}; connections C = $CONCURRENCY; warm-up first: the same at C = $hi for $WARMUP"
  echo "# \$DATA: $BODY_FILE's values as oxiserve-perf input data: $(cat "$WORK/data.json")"
  echo "$PERF -m identity -u 127.0.0.1:\$P -i http --concurrency-range \$C ${PERF_ARGS//$WORK\/data.json/\$DATA} -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json"
  echo '```'
  echo
  echo "Model \`identity\` (\$REPO_OXISERVE with \`backend: \"identity\"\`, \$REPO_TRITON with \`backend: \"python\"\` and a \`1/model.py\` that returns INPUT0 as OUTPUT0 through \`pb_utils\`):"
  echo
  echo '```'
  sed 's/"python"/"python"  # "identity" for oxiserve/' "$WORK/repo-triton/identity/config.pbtxt"
  echo '```'
  echo
  echo "## Results (medians of $RUNS runs)"
  echo
  echo "| target | connections | req/s | p50 µs | p99 µs | errors + non-2xx (all runs) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for t in ceiling oxiserve triton; do
    [[ ${STATUS[$t]:-} == ok* ]] || continue
    for c in $CONCURRENCY; do
      echo "| $t | $c | ${RPS[$t/$c]} | ${P50[$t/$c]} | $(median "$t" "$c" p99_us) | $(total "$t" "$c") |"
    done
  done
  echo
  echo "## Ratios"
  echo
  echo "| connections | req/s oxiserve/Triton | req/s oxiserve/ceiling | req/s Triton/ceiling | p50 oxiserve/Triton | p50 oxiserve/ceiling | p50 Triton/ceiling |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for c in $CONCURRENCY; do
    echo "| $c | $(ratio "${RPS[oxiserve/$c]}" "${RPS[triton/$c]}") | $(ratio "${RPS[oxiserve/$c]}" "${RPS[ceiling/$c]}") | $(ratio "${RPS[triton/$c]}" "${RPS[ceiling/$c]}") | $(ratio "${P50[oxiserve/$c]}" "${P50[triton/$c]}") | $(ratio "${P50[oxiserve/$c]}" "${P50[ceiling/$c]}") | $(ratio "${P50[triton/$c]}" "${P50[ceiling/$c]}") |"
  done
  echo
  echo "## Goal"
  echo
  goal "oxiserve req/s at $hi connections / ceiling" "$(ratio "${RPS[oxiserve/$hi]}" "${RPS[ceiling/$hi]}")" 0.80 ge
  goal "oxiserve p50 at $lo connection / ceiling" "$(ratio "${P50[oxiserve/$lo]}" "${P50[ceiling/$lo]}")" 1.50 le
  echo
  echo "## Targets"
  echo
  for t in ceiling oxiserve triton; do
    echo "- $t: ${STATUS[$t]:-not run (not in TARGETS)}${BUSY[$t]:+ (other processes kept the CPUs ${BUSY[$t]} busy in the 2 s before it)}"
  done
  echo
  echo "## All runs"
  echo
  echo "| target | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
