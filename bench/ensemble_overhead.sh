#!/usr/bin/env bash
# Ensemble overhead benchmark: a one-step ensemble (`platform: "ensemble"`, one step mapping
# the inputs and outputs one to one) wrapping a model, against calling that model directly,
# both on the same server:
#   oxiserve - target/release/oxiserve
#   triton   - real Triton (/work/shared/tools/real-triton.sh; Python backend only)
# KServe v2 JSON over HTTP/1.1, load from oxiserve-perf (crates/perf) at 1, 8, 64 connections
# (one request in flight each), RUNS windows of DURATION per point,
# direct and ensemble runs alternating (direct first in odd runs, ensemble first in even ones):
# medians of req/s, p50, p99, the latency the ensemble adds (p50 and p99 differences) and the
# req/s ratio ensemble/direct; bench/results/ensemble_overhead.md.
#
# Members (MEMBERS), each with its ensemble `ens_<member>` in a fresh server holding only those two:
#   identity - oxiserve's identity backend, INPUT0 FP32 [16] -> OUTPUT0 (oxiserve only: Triton
#              here has no identity backend), so the ensemble's own cost is most of the time
#   add_sub  - Triton's python_backend add_sub example model.py, FP32 [4] x 2 (both targets)
# Members have max_batch_size 8, 1 CPU instance, no dynamic batching (BATCHING=1 adds
# `dynamic_batching { }` to them); the ensemble has max_batch_size 8 too.
#
#   bench/ensemble_overhead.sh                                   # everything: 3 runs x 10 s
#   TARGETS=oxiserve MEMBERS=identity RUNS=1 DURATION=2s bench/ensemble_overhead.sh   # quick
#
# Settings (environment): TARGETS (oxiserve triton), MEMBERS (identity add_sub), RUNS (3),
# DURATION (10s), WARMUP (3s), CONCURRENCY (1 8 64), BATCHING (0), READY_TIMEOUT (300 s),
# BUILD (1: cargo build the release oxiserve first; 0: use target/release/oxiserve as it is),
# OXISERVE_ARGS, TRITON_ARGS (extra server flags), RESULTS (bench/results/ensemble_overhead.md).
# A target that fails to build, start, load the models or answer correctly is reported in the
# results (with the tail of its log) and the run goes on.
# Ports: 18420-18422 (oxiserve), 18430-18432 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
MEMBERS=${MEMBERS:-identity add_sub}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 8 64}
BATCHING=${BATCHING:-0}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
RESULTS=${RESULTS:-bench/results/ensemble_overhead.md}
TRITON_SH=/work/shared/tools/real-triton.sh
ALL_TARGETS="oxiserve triton"
ALL_MEMBERS="identity add_sub"
declare -A PORT=([oxiserve]=18420 [triton]=18430)
declare -A APPLIES=([oxiserve/identity]=1 [oxiserve/add_sub]=1 [triton/add_sub]=1)
declare -A STATUS=() VERSION=() BUSY=()

for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done
for m in $MEMBERS; do [[ " $ALL_MEMBERS " == *" $m "* ]] || { echo "unknown member '$m'" >&2; exit 2; }; done

WORK=$(mktemp -d -t ensemble-overhead-bench.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

# --- models: $WORK/repo-<target>-<member>/{<member>,ens_<member>} ----------------------------
batching=(); [ "$BATCHING" = 1 ] && batching=("dynamic_batching { }")
ensemble() { # DIR MEMBER DIMS INPUTS OUTPUTS: DIR/ens_MEMBER, one step, names mapped to themselves
  local dir=$1/ens_$2 n io=""
  mkdir -p "$dir/1"
  {
    echo "name: \"ens_$2\""
    echo 'platform: "ensemble"'
    echo "max_batch_size: 8"
    echo "input ["
    for n in $4; do io+="${io:+,$'\n'}  { name: \"$n\", data_type: TYPE_FP32, dims: [ $3 ] }"; done
    echo "$io"; io=""
    echo "]"
    echo "output ["
    for n in $5; do io+="${io:+,$'\n'}  { name: \"$n\", data_type: TYPE_FP32, dims: [ $3 ] }"; done
    echo "$io"
    echo "]"
    echo "ensemble_scheduling {"
    echo "  step ["
    echo "    {"
    echo "      model_name: \"$2\""
    echo "      model_version: -1"
    for n in $4; do echo "      input_map { key: \"$n\" value: \"$n\" }"; done
    for n in $5; do echo "      output_map { key: \"$n\" value: \"$n\" }"; done
    echo "    }"
    echo "  ]"
    echo "}"
  } >"$dir/config.pbtxt"
}
for t in $ALL_TARGETS; do
  make_add_sub_model "$WORK/repo-$t-add_sub" add_sub "${batching[@]}"
  ensemble "$WORK/repo-$t-add_sub" add_sub 4 "INPUT0 INPUT1" "OUTPUT0 OUTPUT1"
done
_identity_repo "$WORK/repo-oxiserve-identity" identity
{ echo "instance_group [ { count: 1, kind: KIND_CPU } ]"
  [ "$BATCHING" != 1 ] || echo "dynamic_batching { }"; } >>"$WORK/repo-oxiserve-identity/identity/config.pbtxt"
ensemble "$WORK/repo-oxiserve-identity" identity 16 INPUT0 OUTPUT0
add_sub_body "$WORK/add_sub.body"
cp bench/data/identity_fp32_1x16.json "$WORK/identity.body"
for m in add_sub identity; do perf_data "$WORK/$m.body" "$WORK/$m.data.json"; done
declare -A DESC=(
  [add_sub]="JSON, INPUT0/INPUT1 FP32 [1,4] ($(wc -c <"$WORK/add_sub.body") B body)"
  [identity]="JSON, INPUT0 FP32 [1,16] (\`bench/data/identity_fp32_1x16.json\`, $(wc -c <"$WORK/identity.body") B body)"
)

# --- per-target build and server command ---------------------------------------------------
build() { # TARGET
  case $1 in
    oxiserve) if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve; fi
      [ -x "$OXISERVE_BIN" ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
cmd() { # TARGET MEMBER: the server command line
  local p=${PORT[$1]}
  local ports="--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))"
  case $1 in
    oxiserve) echo "$OXISERVE_BIN --model-repository=$WORK/repo-$1-$2 $ports${OXISERVE_ARGS:+ $OXISERVE_ARGS}" ;;
    triton) echo "bash $TRITON_SH --model-repository=$WORK/repo-$1-$2 $ports${TRITON_ARGS:+ $TRITON_ARGS}" ;;
  esac
}
wait_ready() { # TARGET MEMBER: server ready, both models ready, right answers
  local model err
  await_ready "${PORT[$1]}" "$SERVER_PID" "$READY_TIMEOUT" "$2" "ens_$2" || return 1
  for model in "$2" "ens_$2"; do
    err=$(check_answer "${PORT[$1]}" "$model" "$WORK/$2.body" "$2" 2>&1) ||
      { echo "wrong answer from $model: $(tail -n 2 <<<"$err" | tr '\n' ' ')"; return 1; }
  done
}

# --- benchmark ----------------------------------------------------------------------------
echo -e "target\tmember\tpath\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx" >"$WORK/runs.tsv"
run_load() { # CONNS PORT DURATION MEMBER MODEL
  perf_point "$5" "$2" "$1" "$3" --input-data "$WORK/$4.data.json" \
    --input-tensor-format json --output-tensor-format json
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
for t in $TARGETS; do
  BUSY[$t]=$(cpu_busy)
  log "$t: prepare (CPUs ${BUSY[$t]} busy with other work)"
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    for m in $MEMBERS; do STATUS[$t/$m]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; done
    log "build of $t failed"; continue
  fi
  for m in $MEMBERS; do
    [ -n "${APPLIES[$t/$m]:-}" ] || continue
    if curl -s -o /dev/null "http://127.0.0.1:${PORT[$t]}/"; then
      STATUS[$t/$m]="not run: port ${PORT[$t]} already in use by another process"; log "${STATUS[$t/$m]}"; continue
    fi
    log "$t/$m: $(cmd "$t" "$m")"
    $(cmd "$t" "$m") >"$WORK/$t.$m.log" 2>&1 &
    SERVER_PID=$!
    if ! why=$(wait_ready "$t" "$m"); then
      STATUS[$t/$m]="failed ($why); server log: $(server_log_tail "$WORK/$t.$m.log")"
      log "$t/$m: ${STATUS[$t/$m]}"; stop_server; continue
    fi
    [ -n "${VERSION[$t]:-}" ] || VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" |
      python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
    log "$t/$m: warm-up ($WARMUP at $max_conns connections, direct and ensemble)"
    run_load "$max_conns" "${PORT[$t]}" "$WARMUP" "$m" "$m" >/dev/null || true
    run_load "$max_conns" "${PORT[$t]}" "$WARMUP" "$m" "ens_$m" >/dev/null || true
    STATUS[$t/$m]=ok
    for c in $CONCURRENCY; do
      for r in $(seq "$RUNS"); do
        order="direct ensemble"; [ $((r % 2)) = 1 ] || order="ensemble direct"
        for path in $order; do
          model=$m; [ "$path" = direct ] || model=ens_$m
          out=$(run_load "$c" "${PORT[$t]}" "$DURATION" "$m" "$model" | grep '^RESULT ' || true)
          [ -n "$out" ] || { STATUS[$t/$m]="ok, except: oxiserve-perf gave no result at $c connections, $path, run $r"; continue; }
          log "$t/$m $path c=$c run $r: $out"
          for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
          echo -e "$t\t$m\t$path\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx" >>"$WORK/runs.tsv"
        done
      done
    done
    # both must still answer correctly after the load
    for model in "$m" "ens_$m"; do
      if ! err=$(check_answer "${PORT[$t]}" "$model" "$WORK/$m.body" "$m" 2>&1); then
        STATUS[$t/$m]="${STATUS[$t/$m]}; WRONG ANSWER from $model after the load: $(tail -n 1 <<<"$err")"
      fi
    done
    stop_server
  done
done

# --- report ---------------------------------------------------------------------------------
median() { # TARGET MEMBER PATH CONNS COLUMN -> median over runs, or empty
  awk -F'\t' -v t="$1" -v m="$2" -v p="$3" -v c="$4" -v k="$5" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t && $2 == m && $3 == p && $4 == c { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
total() { awk -F'\t' -v t="$1" -v m="$2" -v p="$3" -v c="$4" '$1 == t && $2 == m && $3 == p && $4 == c { n += $10 + $11 } END { print n + 0 }' "$WORK/runs.tsv"; }
diff_us() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%+d", a - b }' || echo "–"; }
or_dash() { [ -n "$1" ] && echo "$1" || echo "–"; }
declare -A RPS=() P50=() P99=()
for t in $ALL_TARGETS; do for m in $ALL_MEMBERS; do for p in direct ensemble; do for c in $CONCURRENCY; do
  k=$t/$m/$p/$c
  RPS[$k]=$(median "$t" "$m" "$p" "$c" rps); P50[$k]=$(median "$t" "$m" "$p" "$c" p50_us); P99[$k]=$(median "$t" "$m" "$p" "$c" p99_us)
done; done; done; done
complete=yes
for t in $ALL_TARGETS; do for m in $ALL_MEMBERS; do
  [ -z "${APPLIES[$t/$m]:-}" ] || [[ ${STATUS[$t/$m]:-} == ok* ]] || complete=no
done; done
repo_path() { sed "s|$WORK/|\$WORK/|"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Ensemble overhead: a one-step ensemble vs calling its model directly (KServe v2 over HTTP)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\", MEMBERS=\"$MEMBERS\"): see *Targets* for what was not measured, and why."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); servers, their Python processes and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point and path after a $WARMUP warm-up of each path at $max_conns connections; direct and ensemble runs alternate on the same server; C keep-alive connections with one request in flight each; the same request values per member, encoded once"
  echo "- At 1 connection, latency depends on whether the scheduler puts the load generator and the server on the same CPU (see bench/README.md): compare runs in *All runs*"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)') (\`$OXISERVE_BIN\`, built $(date -u -r "$OXISERVE_BIN" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')), Triton ${VERSION[triton]:-?} (from nvidia-pytriton 0.7.0, Python backend)"
  echo "- Python: Triton's stubs run $(pyver "$HOME/.cache/real-triton/venv/bin/python3") (\`~/.cache/real-triton/venv\`); oxiserve's default interpreter here is \`.venv/bin/python3\`: $(pyver .venv/bin/python3)${OXISERVE_ARGS:+ (OXISERVE_ARGS may pick another)}"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" MEMBERS=\"$MEMBERS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" BATCHING=$BATCHING BUILD=$BUILD$([ "$OXISERVE_BIN" = target/release/oxiserve ] || echo " OXISERVE_BIN=$OXISERVE_BIN")${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/ensemble_overhead.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# servers, one at a time, a fresh one per member M (identity, add_sub) holding M and ens_M"
  echo "# (\$WORK: the script's temporary folder; the models are shown below)"
  cmd oxiserve '$M' | repo_path
  cmd triton '$M' | repo_path
  echo "# load: port P = ${PORT[oxiserve]} (oxiserve), ${PORT[triton]} (triton); connections C = $CONCURRENCY; model X = M (direct) or ens_M (ensemble), alternating"
  echo "# warm-up first: the same at C = $max_conns for $WARMUP, direct then ensemble"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PERF -m \$X -u 127.0.0.1:\$P -i http --concurrency-range \$C --input-data \$DATA_M --input-tensor-format json --output-tensor-format json -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json"
  echo '```'
  echo
  echo "Request bodies (\$BODY_M, written by the script; \$DATA_M holds their values in perf_analyzer's data format; before timing, one request to M and one to ens_M must return the right outputs, and again after the load):"
  echo
  for m in $ALL_MEMBERS; do echo "- $m: ${DESC[$m]}"; done
  echo
  echo "Models of member \`add_sub\` (both targets; Triton's add_sub example \`model.py\`, as in \`results/python_add_sub.md\`):"
  echo
  echo '```'
  cat "$WORK/repo-triton-add_sub/add_sub/config.pbtxt"
  echo '```'
  echo
  echo '```'
  cat "$WORK/repo-triton-add_sub/ens_add_sub/config.pbtxt"
  echo '```'
  echo
  echo "Models of member \`identity\` (oxiserve's identity backend; OUTPUT0 = INPUT0):"
  echo
  echo '```'
  cat "$WORK/repo-oxiserve-identity/identity/config.pbtxt"
  echo '```'
  echo
  echo '```'
  cat "$WORK/repo-oxiserve-identity/ens_identity/config.pbtxt"
  echo '```'
  for m in $MEMBERS; do
    echo
    echo "## Results: $m (medians of $RUNS runs)"
    echo
    echo "| target | connections | req/s direct | req/s ensemble | req/s ensemble/direct | p50 µs direct | p50 µs ensemble | p50 added µs | p99 µs direct | p99 µs ensemble | p99 added µs | errors + non-2xx direct / ensemble |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for t in $ALL_TARGETS; do
      if [ -z "${APPLIES[$t/$m]:-}" ]; then echo "| $t | – | – | – | – | – | – | – | – | – | – | not applicable |"; continue; fi
      if [[ ${STATUS[$t/$m]:-} != ok* ]]; then
        echo "| $t | – | – | – | – | – | – | – | – | – | – | $([ -n "${STATUS[$t/$m]:-}" ] && echo 'failed, see *Targets*' || echo 'not run') |"; continue
      fi
      for c in $CONCURRENCY; do
        d=$t/$m/direct/$c e=$t/$m/ensemble/$c
        echo "| $t | $c | $(or_dash "${RPS[$d]}") | $(or_dash "${RPS[$e]}") | $(ratio "${RPS[$e]}" "${RPS[$d]}") | $(or_dash "${P50[$d]}") | $(or_dash "${P50[$e]}") | $(diff_us "${P50[$e]}" "${P50[$d]}") | $(or_dash "${P99[$d]}") | $(or_dash "${P99[$e]}") | $(diff_us "${P99[$e]}" "${P99[$d]}") | $(total "$t" "$m" direct "$c") / $(total "$t" "$m" ensemble "$c") |"
      done
    done
  done
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do
    for m in $ALL_MEMBERS; do
      [ -z "${APPLIES[$t/$m]:-}" ] || echo "- $t, $m: ${STATUS[$t/$m]:-not run (not in TARGETS/MEMBERS)}"
    done
    [ -z "${BUSY[$t]:-}" ] || echo "  (before $t: other processes kept the CPUs ${BUSY[$t]} busy over 2 s)"
  done
  echo
  echo "## All runs"
  echo
  echo "| target | member | path | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx |"
  echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
