#!/usr/bin/env bash
# Request-path benchmark of the identity model (issue 29) in three protocols, load from
# oxiserve-perf: KServe v2 over HTTP/1.1 with JSON tensors (json), over HTTP/1.1 with the binary
# tensor extension (binary), and over gRPC (grpc), against:
#   ceiling  - bench/ceiling: one bare server doing the least work per protocol: axum parsing the
#              JSON (or the binary extension's JSON header) and echoing the inputs back, tonic
#              echoing ModelInfer's inputs (and each answering the model's metadata and
#              configuration, static, for oxiserve-perf)
#   oxiserve - target/release/oxiserve serving an identity-backend model
#   triton   - real Triton (/work/shared/tools/real-triton.sh) serving a Python identity model
# Every target is built, started and waited for, and all stay up; then per protocol each
# target's answer is checked (OUTPUT0 = the request's INPUT0) and it is warmed up, and per
# concurrency RUNS oxiserve-perf windows (crates/perf; one request in flight per connection,
# the values of bench/data/identity_fp32_1x16.json) run on each target, alternating between
# the targets; finally bench/results/http_identity.md gets, per protocol, medians, ratios and
# issue 29's goals (oxiserve against the ceiling).
#
#   TARGETS="ceiling oxiserve triton" PROTOCOLS="json binary grpc" RUNS=3 DURATION=10s bench/http_identity.sh
#
# Settings (environment): TARGETS, PROTOCOLS (json binary grpc), RUNS (3), DURATION (10s),
# WARMUP (3s), CONCURRENCY (1 8 64), READY_TIMEOUT (300 s), BUILD (1: cargo build oxiserve-perf
# and the targets first; 0: use the binaries as they are), RESULTS (bench/results/http_identity.md).
#
# A target that fails to build or start, or a protocol whose answer is wrong, is reported in the
# results, not fatal.
# Ports (HTTP, gRPC = HTTP + 1): 18300-18301 (ceiling), 18310-18312 (oxiserve), 18320-18322 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-ceiling oxiserve triton}
PROTOCOLS=${PROTOCOLS:-json binary grpc}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 8 64}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/http_identity.md}
BODY_FILE=bench/data/identity_fp32_1x16.json
TRITON_SH=/work/shared/tools/real-triton.sh
CEILING=bench/ceiling/target/release/ceiling
ALL_TARGETS="ceiling oxiserve triton"
ALL_PROTOCOLS="json binary grpc"
declare -A PORT=([ceiling]=18300 [oxiserve]=18310 [triton]=18320)
# Per protocol: its name in the results, oxiserve-perf's -i and tensor format flags, and the
# request oxiserve-perf sends.
declare -A TITLE=([json]="HTTP, JSON tensors" [binary]="HTTP, binary tensors" [grpc]="gRPC")
declare -A PERF_I=([json]=http [binary]=http [grpc]=grpc)
declare -A FORMAT=(
  [json]="--input-tensor-format json --output-tensor-format json"
  [binary]="--input-tensor-format binary --output-tensor-format binary"
  [grpc]=""
)
# shellcheck disable=SC2016 # the backticks are Markdown
declare -A REQUEST=(
  [json]='KServe v2 JSON body, JSON output'
  [binary]='binary tensor extension (`Inference-Header-Content-Length`: a JSON header, then the 64 bytes of INPUT0), OUTPUT0 asked as binary (`binary_data_output`)'
  [grpc]='`ModelInfer` with INPUT0 in `raw_input_contents`, one HTTP/2 connection per connection counted'
)
# STATUS: per target (build, start); PSTATUS: per target/protocol (answer, measurement).
declare -A STATUS=() PSTATUS=() CMD=() VERSION=() BUSY=() PIDS=()

for p in $PROTOCOLS; do [ -n "${TITLE[$p]:-}" ] || { echo "unknown protocol '$p' (json, binary, grpc)" >&2; exit 2; }; done
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
trap 'stop_servers; stop_server; rm -rf "$WORK"' EXIT
log() { echo "[bench] $*" >&2; }

# --- model repositories: the same config, backend "identity" or "python" -----------------
. bench/lib/common.sh
make_identity_repos "$WORK"
perf_data "$BODY_FILE" "$WORK/data.json"

# --- per-target build, start command, readiness, answers ----------------------------------
build() { # TARGET
  case $1 in
    ceiling) if [ "$BUILD" = 1 ]; then cargo build --release --locked --manifest-path bench/ceiling/Cargo.toml; fi
      [ -x "$CEILING" ] ;;
    oxiserve) if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve; fi
      [ -x target/release/oxiserve ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
ceiling_stale() { # with BUILD=0: a note when a ceiling source is newer than its binary
  local newer
  newer=$(find bench/ceiling/src bench/ceiling/build.rs bench/ceiling/Cargo.toml bench/ceiling/Cargo.lock \
    -newer "$CEILING" -print -quit 2>/dev/null || true)
  [ -z "$newer" ] || echo "; its binary is older than $newer (BUILD=1 rebuilds it)"
}
set_cmd() { # TARGET: the server command line, in CMD[TARGET]
  local p=${PORT[$1]} ports="--http-port=${PORT[$1]} --grpc-port=$((PORT[$1] + 1)) --metrics-port=$((PORT[$1] + 2))"
  case $1 in
    ceiling) CMD[$1]="$CEILING --port $p --grpc-port $((p + 1))" ;;
    oxiserve) CMD[$1]="target/release/oxiserve --model-repository=$WORK/repo-oxiserve $ports" ;;
    triton) CMD[$1]="bash $TRITON_SH --model-repository=$WORK/repo-triton $ports" ;;
  esac
}
wait_ready() { # TARGET: 200 on /v2/health/ready (the ceiling: any HTTP answer)
  local base="http://127.0.0.1:${PORT[$1]}" code deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "exited before ready"; return 1; }
    code=$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/health/ready" || true)
    [ "$code" = 200 ] || { [ "$1" = ceiling ] && [ "$code" != 000 ]; } && return 0
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${READY_TIMEOUT}s"; return 1; }
    sleep 0.5
  done
}
check_answer_in() { # PROTOCOL HTTP_PORT: one request with BODY_FILE's INPUT0; OUTPUT0 must hold
  # its values (json: the body as it is, through http.client; binary: tritonclient.http with
  # binary_data=True, the answer binary too; grpc: tritonclient.grpc on HTTP_PORT + 1)
  .venv/bin/python - "$@" "$BODY_FILE" <<'PY' 2>&1 | tail -n 1
import json, sys
import numpy as np
proto, port, body = sys.argv[1], int(sys.argv[2]), sys.argv[3]
req = json.load(open(body))
x = req["inputs"][0]
want = np.array(x["data"], dtype=np.float32).reshape(x["shape"])
if proto == "json":
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v2/models/identity/infer", json.dumps(req), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    assert r.status == 200, f"HTTP {r.status}: {data[:300]!r}"
    out = json.loads(data)["outputs"][0]
    assert out["name"] == "OUTPUT0" and out["shape"] == x["shape"] and out["datatype"] == "FP32", str(out)[:300]
    got = np.array([float(v) for v in out["data"]], dtype=np.float32).reshape(out["shape"])
else:
    import tritonclient.grpc as g
    import tritonclient.http as h
    mod, url, kw = (g, f"127.0.0.1:{port + 1}", {}) if proto == "grpc" else (h, f"127.0.0.1:{port}", {"binary_data": True})
    inp = mod.InferInput("INPUT0", x["shape"], "FP32")
    inp.set_data_from_numpy(want, **kw)
    result = mod.InferenceServerClient(url).infer("identity", [inp], outputs=[mod.InferRequestedOutput("OUTPUT0", **kw)])
    if proto == "binary":
        out = result.get_response()["outputs"][0]
        assert out.get("parameters", {}).get("binary_data_size") == want.nbytes, f"not a binary OUTPUT0: {out}"
    got = result.as_numpy("OUTPUT0")
assert got is not None and got.dtype == np.float32 and (got == want).all(), f"OUTPUT0 {got!r} != {want!r}"
PY
  return "${PIPESTATUS[0]}"
}

# --- benchmark ------------------------------------------------------------------------------
echo -e "protocol\ttarget\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx" >"$WORK/runs.tsv"
run_load() { # PROTOCOL CONNS DURATION: one perf_point window against target $t (gRPC: its port + 1)
  # shellcheck disable=SC2086 # FORMAT: several flags
  case $1 in
    grpc) PERF_PROTOCOL=grpc perf_point identity $((PORT[$t] + 1)) "$2" "$3" --input-data "$WORK/data.json" ;;
    *) perf_point identity "${PORT[$t]}" "$2" "$3" --input-data "$WORK/data.json" ${FORMAT[$1]} ;;
  esac
}
result_row() { # "RESULT k=v ..." (perf_point) -> rps p50_us p90_us p99_us errors non2xx, tab-separated
  awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%s\t%s\t%s\t%s\t%s\t%s", v["rps"], v["p50_us"], v["p90_us"], v["p99_us"], v["errors"], v["non2xx"] }' <<<"$1"
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
# Every target is started first and stays up; then per protocol and point the runs alternate
# between the targets (the first target first in odd runs, last in even ones), so the drift of
# this shared VM's speed falls on all of them alike. The targets not measured idle meanwhile.
up=()
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
  PIDS[$t]=$SERVER_PID
  STATUS[$t]=ok
  [ "$t" != ceiling ] || [ "$BUILD" = 1 ] || STATUS[$t]+=$(ceiling_stale)
  VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
  up+=("$t")
done
for p in $PROTOCOLS; do
  ready=()
  for t in "${up[@]}"; do
    if ! why=$(check_answer_in "$p" "${PORT[$t]}"); then
      PSTATUS[$t/$p]="wrong answer: $why"; log "$t $p: ${PSTATUS[$t/$p]}"; continue
    fi
    log "$t $p: warm-up ($WARMUP at $max_conns connections)"
    run_load "$p" "$max_conns" "$WARMUP" >/dev/null
    PSTATUS[$t/$p]=ok
    ready+=("$t")
  done
  [ ${#ready[@]} -gt 0 ] || continue
  for c in $CONCURRENCY; do
    for r in $(seq "$RUNS"); do
      # shellcheck disable=SC2046 # run_order prints the targets, one word each
      for t in $(run_order "$r" "${ready[@]}"); do
        out=$(run_load "$p" "$c" "$DURATION" | grep '^RESULT ' || true)
        [ -n "$out" ] || { PSTATUS[$t/$p]="ok, except: oxiserve-perf gave no result at $c connections, run $r"; continue; }
        log "$t $p c=$c run $r: $out"
        echo -e "$p\t$t\t$c\t$r\t$(result_row "$out")" >>"$WORK/runs.tsv"
      done
    done
  done
done
stop_servers

# --- report ---------------------------------------------------------------------------------
median() { # PROTOCOL TARGET CONNS COLUMN -> median over runs, or empty
  awk -F'\t' -v p="$1" -v t="$2" -v c="$3" -v k="$4" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == p && $2 == t && $3 == c { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
total() { # PROTOCOL TARGET CONNS -> errors + non-2xx over runs
  awk -F'\t' -v p="$1" -v t="$2" -v c="$3" '$1 == p && $2 == t && $3 == c { n += $9 + $10 } END { print n + 0 }' "$WORK/runs.tsv"
}
goal() { # LABEL VALUE LIMIT OP(ge|le)
  [ "$2" != "–" ] || { echo "- $1: not measured"; return; }
  awk -v v="$2" -v l="$3" -v op="$4" -v label="$1" 'BEGIN { ok = op == "ge" ? v >= l : v <= l
    printf "- %s: %s (%s %s) -> **%s**\n", label, v, op == "ge" ? ">=" : "<=", l, ok ? "met" : "NOT met" }'
}
measured() { [[ ${STATUS[$1]:-} == ok* ]] && [[ ${PSTATUS[$1/$2]:-} == ok* ]]; } # TARGET PROTOCOL
declare -A RPS=() P50=()
for p in $ALL_PROTOCOLS; do
  for t in $ALL_TARGETS; do
    for c in $CONCURRENCY; do RPS[$p/$t/$c]=$(median "$p" "$t" "$c" rps); P50[$p/$t/$c]=$(median "$p" "$t" "$c" p50_us); done
  done
done
lo=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | head -n 1)
hi=$max_conns
complete=yes
for t in $ALL_TARGETS; do for p in $ALL_PROTOCOLS; do measured "$t" "$p" || complete=no; done; done
lock_version() { awk -v n="$1" '$0 == "name = \"" n "\"" { getline; print $3 }' bench/ceiling/Cargo.lock | tr -d '"'; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# HTTP and gRPC benchmark: identity model, KServe v2 (JSON, binary tensors, gRPC)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\", PROTOCOLS=\"$PROTOCOLS\"): see *Targets* for what was not measured."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); servers and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $hi connections (per protocol); C keep-alive connections with one request in flight each; the same request for all targets: INPUT0 FP32 [1,16] with the values of \`$BODY_FILE\` (oxiserve-perf reads the model's metadata and configuration first; the ceiling answers them, static), sent as"
  for p in $PROTOCOLS; do echo "  - $p (${TITLE[$p]}): ${REQUEST[$p]}"; done
  echo "- At 1 connection, latency depends on whether the scheduler puts oxiserve-perf and the server on the same CPU (see bench/README.md): compare runs in *All runs*"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)'), Triton ${VERSION[triton]:-?} (Python backend), ceiling axum $(lock_version axum), tonic $(lock_version tonic)"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" PROTOCOLS=\"$PROTOCOLS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" BUILD=$BUILD bench/http_identity.sh"
  echo "# builds$([ "$BUILD" = 1 ] || echo ' (not run: BUILD=0)')"
  echo "cargo build --release --locked -p oxiserve-perf"
  echo "cargo build --release --locked --manifest-path bench/ceiling/Cargo.toml"
  echo "cargo build --release --locked --bin oxiserve"
  echo "# servers, all up at once; per point the runs alternate between them (REPO_*: temporary model repositories, see below)"
  for t in $ALL_TARGETS; do
    set_cmd "$t"; echo "${CMD[$t]}" | sed "s|$WORK/repo-oxiserve|\$REPO_OXISERVE|; s|$WORK/repo-triton|\$REPO_TRITON|"
  done
  echo "# load: HTTP port P = ${PORT[ceiling]}, ${PORT[oxiserve]}, ${PORT[triton]}, gRPC port P + 1; connections C = $CONCURRENCY; warm-up first: the same at C = $hi for $WARMUP"
  echo "# \$DATA: $BODY_FILE's values as oxiserve-perf input data: $(cat "$WORK/data.json")"
  for p in $PROTOCOLS; do
    port="\$P"; [ "$p" != grpc ] || port="\$((P + 1))"
    echo "$PERF -m identity -u 127.0.0.1:$port -i ${PERF_I[$p]} --concurrency-range \$C --input-data \$DATA ${FORMAT[$p]}${FORMAT[$p]:+ }-p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json  # $p"
  done
  echo '```'
  echo
  echo "Model \`identity\` (\$REPO_OXISERVE with \`backend: \"identity\"\`, \$REPO_TRITON with \`backend: \"python\"\` and a \`1/model.py\` that returns INPUT0 as OUTPUT0 through \`pb_utils\`):"
  echo
  echo '```'
  sed 's/"python"/"python"  # "identity" for oxiserve/' "$WORK/repo-triton/identity/config.pbtxt"
  echo '```'
  for p in $PROTOCOLS; do
    echo
    echo "## $p: ${TITLE[$p]}"
    echo
    echo "### Results (medians of $RUNS runs)"
    echo
    echo "| target | connections | req/s | p50 µs | p99 µs | errors + non-2xx (all runs) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    for t in $ALL_TARGETS; do
      measured "$t" "$p" || continue
      for c in $CONCURRENCY; do
        echo "| $t | $c | ${RPS[$p/$t/$c]} | ${P50[$p/$t/$c]} | $(median "$p" "$t" "$c" p99_us) | $(total "$p" "$t" "$c") |"
      done
    done
    echo
    echo "### Ratios"
    echo
    echo "| connections | req/s oxiserve/Triton | req/s oxiserve/ceiling | req/s Triton/ceiling | p50 oxiserve/Triton | p50 oxiserve/ceiling | p50 Triton/ceiling |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for c in $CONCURRENCY; do
      o=$p/oxiserve/$c tr=$p/triton/$c ce=$p/ceiling/$c
      echo "| $c | $(ratio "${RPS[$o]}" "${RPS[$tr]}") | $(ratio "${RPS[$o]}" "${RPS[$ce]}") | $(ratio "${RPS[$tr]}" "${RPS[$ce]}") | $(ratio "${P50[$o]}" "${P50[$tr]}") | $(ratio "${P50[$o]}" "${P50[$ce]}") | $(ratio "${P50[$tr]}" "${P50[$ce]}") |"
    done
    echo
    echo "### Goal (issue 29)"
    echo
    goal "$p: oxiserve req/s at $hi connections / ceiling" "$(ratio "${RPS[$p/oxiserve/$hi]}" "${RPS[$p/ceiling/$hi]}")" 0.80 ge
    goal "$p: oxiserve p50 at $lo connection / ceiling" "$(ratio "${P50[$p/oxiserve/$lo]}" "${P50[$p/ceiling/$lo]}")" 1.50 le
  done
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do
    line="- $t: ${STATUS[$t]:-not run (not in TARGETS)}"
    if [[ ${STATUS[$t]:-} == ok* ]]; then
      for p in $ALL_PROTOCOLS; do line+="; $p: ${PSTATUS[$t/$p]:-not run (not in PROTOCOLS)}"; done
    fi
    echo "$line${BUSY[$t]:+ (other processes kept the CPUs ${BUSY[$t]} busy in the 2 s before it)}"
  done
  echo
  echo "## All runs"
  echo
  echo "| protocol | target | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
