#!/usr/bin/env bash
# Dynamic batching benchmark: the same model served with and without `dynamic_batching { }`
# (max_batch_size 8, 1 CPU instance), side by side, by
#   oxiserve - target/release/oxiserve
#   triton   - real Triton (/work/shared/tools/real-triton.sh; Python backend only)
# KServe v2 JSON over HTTP/1.1, load from oxiserve-perf (crates/perf) at 1..64 connections (one
# request in flight each), RUNS windows of DURATION per point:
# medians of req/s, p50, p99, the average batch size the model executed (from
# GET /v2/models/<m>/stats: inference_count / execution_count over the run) and the ratio
# with/without batching per target; bench/results/dynamic_batching.md. This is the "before/after
# dynamic batching" throughput comparison of the Triton tutorial in ../shared/seeds/000_*.txt.
#
# Variants (VARIANTS), each served in both modes (MODES: off = no dynamic_batching, on =
# `dynamic_batching { }`) by a fresh server holding only that model:
#   add_sub  - Triton's python_backend add_sub example model.py, FP32 [1,4] x 2 (both targets)
#   identity - oxiserve's identity backend with `execute_delay_ms` = DELAY_MS: a fixed cost per
#              execution, whatever the batch size, as a GPU model roughly has (oxiserve only;
#              Triton here has no identity backend)
#
#   bench/dynamic_batching.sh                                     # everything: 3 runs x 10 s
#   TARGETS=oxiserve VARIANTS=identity RUNS=1 DURATION=2s bench/dynamic_batching.sh   # quick
#
# Settings (environment): TARGETS (oxiserve triton), VARIANTS (add_sub identity), MODES (off on),
# RUNS (3), DURATION (10s), WARMUP (3s), CONCURRENCY (1 2 4 8 16 32 64), DELAY_MS (2),
# READY_TIMEOUT (300 s), BUILD (1: cargo build the release oxiserve first; 0: use
# target/release/oxiserve as it is), OXISERVE_BIN (the binary run: target/release/oxiserve), OXISERVE_ARGS, TRITON_ARGS (extra server flags),
# RESULTS (bench/results/dynamic_batching.md).
# A target that fails to build, start, load the model or answer correctly is reported in the
# results (with the tail of its log) and the run goes on.
# Ports: 18400-18402 (oxiserve), 18410-18412 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
VARIANTS=${VARIANTS:-add_sub identity}
MODES=${MODES:-off on}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 2 4 8 16 32 64}
DELAY_MS=${DELAY_MS:-2}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
RESULTS=${RESULTS:-bench/results/dynamic_batching.md}
TRITON_SH=/work/shared/tools/real-triton.sh
ALL_TARGETS="oxiserve triton"
ALL_VARIANTS="add_sub identity"
ALL_MODES="off on"
declare -A PORT=([oxiserve]=18400 [triton]=18410)
declare -A KIND=([add_sub]=add_sub [identity]=identity)
declare -A APPLIES=([oxiserve/add_sub]=1 [oxiserve/identity]=1 [triton/add_sub]=1)
declare -A STATUS=() VERSION=() BUSY=()

for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done
for v in $VARIANTS; do [ -n "${KIND[$v]:-}" ] || { echo "unknown variant '$v'" >&2; exit 2; }; done
for m in $MODES; do [[ " $ALL_MODES " == *" $m "* ]] || { echo "unknown mode '$m'" >&2; exit 2; }; done

WORK=$(mktemp -d -t dynamic-batching-bench.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

# --- models: $WORK/repo-<target>-<variant>-<mode>/<variant> ----------------------------------
for t in $ALL_TARGETS; do
  make_add_sub_model "$WORK/repo-$t-add_sub-off" add_sub
  make_add_sub_model "$WORK/repo-$t-add_sub-on" add_sub "dynamic_batching { }"
done
for m in $ALL_MODES; do
  _identity_repo "$WORK/repo-oxiserve-identity-$m" identity
  { echo "instance_group [ { count: 1, kind: KIND_CPU } ]"
    echo "parameters { key: \"execute_delay_ms\" value: { string_value: \"$DELAY_MS\" } }"
    [ "$m" = off ] || echo "dynamic_batching { }"; } >>"$WORK/repo-oxiserve-identity-$m/identity/config.pbtxt"
done
add_sub_body "$WORK/add_sub.body"
cp bench/data/identity_fp32_1x16.json "$WORK/identity.body"
for v in add_sub identity; do perf_data "$WORK/$v.body" "$WORK/$v.data.json"; done
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
cmd() { # TARGET VARIANT MODE: the server command line
  local p=${PORT[$1]}
  local ports="--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))"
  case $1 in
    oxiserve) echo "$OXISERVE_BIN --model-repository=$WORK/repo-$1-$2-$3 $ports${OXISERVE_ARGS:+ $OXISERVE_ARGS}" ;;
    triton) echo "bash $TRITON_SH --model-repository=$WORK/repo-$1-$2-$3 $ports${TRITON_ARGS:+ $TRITON_ARGS}" ;;
  esac
}
wait_ready() { # TARGET VARIANT: server ready, model ready, right answer
  await_ready "${PORT[$1]}" "$SERVER_PID" "$READY_TIMEOUT" "$2" || return 1
  local err
  err=$(check_answer "${PORT[$1]}" "$2" "$WORK/$2.body" "${KIND[$2]}" 2>&1) ||
    { echo "wrong answer: $(tail -n 2 <<<"$err" | tr '\n' ' ')"; return 1; }
}

# --- benchmark ----------------------------------------------------------------------------
echo -e "target\tvariant\tmode\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tinferences\texecutions\tbatch" >"$WORK/runs.tsv"
run_load() { # CONNS PORT DURATION VARIANT
  perf_point "$4" "$2" "$1" "$3" --input-data "$WORK/$4.data.json" \
    --input-tensor-format json --output-tensor-format json
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
for t in $TARGETS; do
  BUSY[$t]=$(cpu_busy)
  log "$t: prepare (CPUs ${BUSY[$t]} busy with other work)"
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    for v in $VARIANTS; do for m in $MODES; do STATUS[$t/$v/$m]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; done; done
    log "build of $t failed"; continue
  fi
  for v in $VARIANTS; do
    [ -n "${APPLIES[$t/$v]:-}" ] || continue
    for m in $MODES; do
      if curl -s -o /dev/null "http://127.0.0.1:${PORT[$t]}/"; then
        STATUS[$t/$v/$m]="not run: port ${PORT[$t]} already in use by another process"; log "${STATUS[$t/$v/$m]}"; continue
      fi
      log "$t/$v/$m: $(cmd "$t" "$v" "$m")"
      $(cmd "$t" "$v" "$m") >"$WORK/$t.$v.$m.log" 2>&1 &
      SERVER_PID=$!
      if ! why=$(wait_ready "$t" "$v"); then
        STATUS[$t/$v/$m]="failed ($why); server log: $(server_log_tail "$WORK/$t.$v.$m.log")"
        log "$t/$v/$m: ${STATUS[$t/$v/$m]}"; stop_server; continue
      fi
      [ -n "${VERSION[$t]:-}" ] || VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
      log "$t/$v/$m: warm-up ($WARMUP at $max_conns connections)"
      run_load "$max_conns" "${PORT[$t]}" "$WARMUP" "$v" >/dev/null || true
      STATUS[$t/$v/$m]=ok
      for c in $CONCURRENCY; do
        for r in $(seq "$RUNS"); do
          before=$(model_counts "${PORT[$t]}" "$v")
          out=$(run_load "$c" "${PORT[$t]}" "$DURATION" "$v" | grep '^RESULT ' || true)
          after=$(model_counts "${PORT[$t]}" "$v")
          [ -n "$out" ] || { STATUS[$t/$v/$m]="ok, except: oxiserve-perf gave no result at $c connections, run $r"; continue; }
          for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
          read -r i0 e0 <<<"${before:-- -}"; read -r i1 e1 <<<"${after:-- -}"
          if [[ $i0$e0$i1$e1 =~ ^[0-9]+$ ]] && [ $((e1 - e0)) -gt 0 ]; then
            inf=$((i1 - i0)) exe=$((e1 - e0)) batch=$(ratio $((i1 - i0)) $((e1 - e0)))
          else
            inf=– exe=– batch=–
          fi
          log "$t/$v/$m c=$c run $r: $out batch=$batch"
          echo -e "$t\t$v\t$m\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx\t$inf\t$exe\t$batch" >>"$WORK/runs.tsv"
        done
      done
      # the server must still answer correctly after the load
      if ! err=$(check_answer "${PORT[$t]}" "$v" "$WORK/$v.body" "${KIND[$v]}" 2>&1); then
        STATUS[$t/$v/$m]="${STATUS[$t/$v/$m]}; WRONG ANSWER after the load: $(tail -n 1 <<<"$err")"
      fi
      stop_server
    done
  done
done

# --- report ---------------------------------------------------------------------------------
median() { # TARGET VARIANT MODE CONNS COLUMN [FORMAT] -> median over runs, or empty
  awk -F'\t' -v t="$1" -v v="$2" -v m="$3" -v c="$4" -v k="$5" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t && $2 == v && $3 == m && $4 == c && $col[k] != "–" { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk -v f="${6:-%.0f}" '{ a[NR] = $1 } END { if (NR) printf f, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
total() { awk -F'\t' -v t="$1" -v v="$2" -v m="$3" -v c="$4" '$1 == t && $2 == v && $3 == m && $4 == c { n += $10 + $11 } END { print n + 0 }' "$WORK/runs.tsv"; }
or_dash() { [ -n "$1" ] && echo "$1" || echo "–"; }
declare -A RPS=() P50=() P99=() BATCH=()
for t in $ALL_TARGETS; do for v in $ALL_VARIANTS; do for m in $ALL_MODES; do for c in $CONCURRENCY; do
  k=$t/$v/$m/$c
  RPS[$k]=$(median "$t" "$v" "$m" "$c" rps); P50[$k]=$(median "$t" "$v" "$m" "$c" p50_us)
  P99[$k]=$(median "$t" "$v" "$m" "$c" p99_us); BATCH[$k]=$(median "$t" "$v" "$m" "$c" batch %.2f)
done; done; done; done
complete=yes
for t in $ALL_TARGETS; do for v in $ALL_VARIANTS; do for m in $ALL_MODES; do
  [ -z "${APPLIES[$t/$v]:-}" ] || [[ ${STATUS[$t/$v/$m]:-} == ok* ]] || complete=no
done; done; done
repo_path() { sed "s|$WORK/|\$WORK/|"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Dynamic batching: throughput with and without \`dynamic_batching\`, oxiserve and real Triton (KServe v2 over HTTP)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\", VARIANTS=\"$VARIANTS\", MODES=\"$MODES\"): see *Targets* for what was not measured, and why."
    echo
  fi
  echo "The \"before/after dynamic batching\" throughput comparison of the Triton tutorial (../shared/seeds/000_*.txt, *ETC*): the same model, one CPU instance, \`max_batch_size: 8\`, served without (\`off\`) and with (\`on\`) \`dynamic_batching { }\`, under a growing number of concurrent clients."
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); servers, their Python processes and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $max_conns connections; C keep-alive connections with one request in flight each; the same request values per variant, encoded once"
  echo "- Average batch: (inference_count after - before) / (execution_count after - before) of \`GET /v2/models/<m>/stats\` around each run (1.00 = no batching)"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)') (\`$OXISERVE_BIN\`, built $(date -u -r "$OXISERVE_BIN" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')), Triton ${VERSION[triton]:-?} (from nvidia-pytriton 0.7.0, Python backend)"
  echo "- Python: Triton's stubs run $(pyver "$HOME/.cache/real-triton/venv/bin/python3") (\`~/.cache/real-triton/venv\`); oxiserve's default interpreter here is \`.venv/bin/python3\`: $(pyver .venv/bin/python3)${OXISERVE_ARGS:+ (OXISERVE_ARGS may pick another)}"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" VARIANTS=\"$VARIANTS\" MODES=\"$MODES\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" DELAY_MS=$DELAY_MS BUILD=$BUILD$([ "$OXISERVE_BIN" = target/release/oxiserve ] || echo " OXISERVE_BIN=$OXISERVE_BIN")${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/dynamic_batching.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# servers, one at a time, a fresh one per variant V (add_sub, identity) and mode M (off, on), holding only V"
  echo "# (\$WORK: the script's temporary folder; the models are shown below)"
  cmd oxiserve '$V' '$M' | repo_path
  cmd triton '$V' '$M' | repo_path
  echo "# load: port P = ${PORT[oxiserve]} (oxiserve), ${PORT[triton]} (triton); connections C = $CONCURRENCY; warm-up first: the same at C = $max_conns for $WARMUP"
  echo "# around each run: curl -s http://127.0.0.1:\$P/v2/models/\$V/stats   # inference_count, execution_count"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PERF -m \$V -u 127.0.0.1:\$P -i http --concurrency-range \$C --input-data \$DATA_V --input-tensor-format json --output-tensor-format json -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json"
  echo '```'
  echo
  echo "Request bodies (\$BODY_V, written by the script; \$DATA_V holds their values in perf_analyzer's data format; before timing, one request must return the right outputs, and again after the load):"
  echo
  for v in $ALL_VARIANTS; do echo "- $v: ${DESC[$v]}"; done
  echo
  echo '```json'
  cat "$WORK/add_sub.body"; echo
  echo '```'
  echo
  echo "Model \`add_sub\` (both targets; Triton's add_sub example \`model.py\`, as in \`results/python_add_sub.md\`), mode \`on\` (\`off\`: without the \`dynamic_batching\` line):"
  echo
  echo '```'
  cat "$WORK/repo-triton-add_sub-on/add_sub/config.pbtxt"
  echo '```'
  echo
  echo "Model \`identity\` (oxiserve's identity backend: OUTPUT0 = INPUT0, sleeping $DELAY_MS ms in every execution, whatever the batch size), mode \`on\`:"
  echo
  echo '```'
  cat "$WORK/repo-oxiserve-identity-on/identity/config.pbtxt"
  echo '```'
  for v in $VARIANTS; do
    echo
    echo "## Results: $v (medians of $RUNS runs)"
    echo
    echo "| target | connections | req/s off | req/s on | req/s on/off | p50 µs off | p50 µs on | p99 µs off | p99 µs on | avg batch off | avg batch on | errors + non-2xx off / on |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for t in $ALL_TARGETS; do
      if [ -z "${APPLIES[$t/$v]:-}" ]; then echo "| $t | – | – | – | – | – | – | – | – | – | – | not applicable |"; continue; fi
      if [[ ${STATUS[$t/$v/off]:-} != ok* ]] && [[ ${STATUS[$t/$v/on]:-} != ok* ]]; then
        echo "| $t | – | – | – | – | – | – | – | – | – | – | $([ -n "${STATUS[$t/$v/off]:-}${STATUS[$t/$v/on]:-}" ] && echo 'failed, see *Targets*' || echo 'not run') |"; continue
      fi
      for c in $CONCURRENCY; do
        off=$t/$v/off/$c on=$t/$v/on/$c
        echo "| $t | $c | $(or_dash "${RPS[$off]}") | $(or_dash "${RPS[$on]}") | $(ratio "${RPS[$on]}" "${RPS[$off]}") | $(or_dash "${P50[$off]}") | $(or_dash "${P50[$on]}") | $(or_dash "${P99[$off]}") | $(or_dash "${P99[$on]}") | $(or_dash "${BATCH[$off]}") | $(or_dash "${BATCH[$on]}") | $(total "$t" "$v" off "$c") / $(total "$t" "$v" on "$c") |"
      done
    done
    if [ -n "${APPLIES[triton/$v]:-}" ]; then
      echo
      echo "| connections | req/s oxiserve/Triton off | req/s oxiserve/Triton on | p50 oxiserve/Triton off | p50 oxiserve/Triton on |"
      echo "| ---: | ---: | ---: | ---: | ---: |"
      for c in $CONCURRENCY; do
        echo "| $c | $(ratio "${RPS[oxiserve/$v/off/$c]}" "${RPS[triton/$v/off/$c]}") | $(ratio "${RPS[oxiserve/$v/on/$c]}" "${RPS[triton/$v/on/$c]}") | $(ratio "${P50[oxiserve/$v/off/$c]}" "${P50[triton/$v/off/$c]}") | $(ratio "${P50[oxiserve/$v/on/$c]}" "${P50[triton/$v/on/$c]}") |"
      done
    fi
  done
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do
    for v in $ALL_VARIANTS; do
      [ -n "${APPLIES[$t/$v]:-}" ] || continue
      for m in $ALL_MODES; do
        echo "- $t, $v, $m: ${STATUS[$t/$v/$m]:-not run (not in TARGETS/VARIANTS/MODES)}"
      done
    done
    [ -z "${BUSY[$t]:-}" ] || echo "  (before $t: other processes kept the CPUs ${BUSY[$t]} busy over 2 s)"
  done
  echo
  echo "## All runs"
  echo
  echo "| target | variant | mode | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx | inferences | executions | avg batch |"
  echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
