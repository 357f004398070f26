#!/usr/bin/env bash
# Pipeline benchmark: two add_sub steps as an ensemble and through BLS, side by side with the
# add_sub model alone, served from the same repository by
#   oxiserve - target/release/oxiserve (its Python backend)
#   triton   - real Triton (/work/shared/tools/real-triton.sh; Python backend only)
# Models (MODELS; the same files in both repositories, max_batch_size 8, FP32 dims [4], 1 CPU
# instance each, no dynamic batching):
#   add_sub - `add_sub`: Triton's python_backend add_sub example model.py (1 Python execution
#             per request)
#   ens     - `ens_add_sub2`: platform "ensemble", step 1 add_sub(INPUT0, INPUT1) -> sum, diff,
#             step 2 add_sub(sum, diff) -> OUTPUT0 = 2*INPUT0, OUTPUT1 = 2*INPUT1 (2 executions)
#   bls     - `bls_add_sub2`: backend "python", a model.py running the same two steps per request
#             with pb_utils.InferenceRequest(model_name="add_sub", ...).exec() (3 executions:
#             itself and its 2 calls)
# KServe v2 JSON over HTTP/1.1, load from oxiserve-perf (crates/perf) at 1 and 64 connections
# (one request in flight each), RUNS windows of DURATION per point; both servers up at once,
# each point's runs alternating between the targets (oxiserve first in odd runs, Triton in even
# ones). Medians of req/s, p50, p99, the pipelines' efficiency (req/s x executions per request /
# add_sub's own req/s on the same target and connections), the ratios oxiserve/Triton and the
# goals of issue 34; bench/results/bls_pipeline.md.
#
#   bench/bls_pipeline.sh                                            # 3 runs x 10 s per point
#   BUILD=0 RUNS=1 DURATION=2s WARMUP=1s RESULTS=/tmp/bls.md bench/bls_pipeline.sh   # quick
#   TARGETS=oxiserve MODELS="add_sub bls" bench/bls_pipeline.sh      # a partial run
#
# Settings (environment): TARGETS (oxiserve triton), MODELS (add_sub ens bls), RUNS (3),
# DURATION (10s), WARMUP (3s), CONCURRENCY (1 64; 8 is a useful addition), READY_TIMEOUT (300 s),
# BUILD (1: cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch and
# -p oxiserve-perf first; 0: use target/release as it is), OXISERVE_ARGS, TRITON_ARGS (extra
# server flags), RESULTS (bench/results/bls_pipeline.md).
# A target that fails to build, start, load the models or answer correctly is reported in the
# results (with the tail of its log) and the run goes on.
# Ports: 18490-18492 (oxiserve), 18500-18502 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
MODELS=${MODELS:-add_sub ens bls}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 64}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
RESULTS=${RESULTS:-bench/results/bls_pipeline.md}
TRITON_SH=/work/shared/tools/real-triton.sh
OXISERVE_BUILD="cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch"
ALL_TARGETS="oxiserve triton"
ALL_MODELS="add_sub ens bls"
declare -A PORT=([oxiserve]=18490 [triton]=18500)
declare -A MODEL=([add_sub]=add_sub [ens]=ens_add_sub2 [bls]=bls_add_sub2)
declare -A KIND=([add_sub]=add_sub [ens]=add_sub2 [bls]=add_sub2) # check_answer's kind
declare -A EXECS=([add_sub]=1 [ens]=2 [bls]=3)                      # Python executions per request
declare -A STATUS=() VERSION=() BUSY=() PIDS=()

for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done
for m in $MODELS; do [ -n "${MODEL[$m]:-}" ] || { echo "unknown model '$m'" >&2; exit 2; }; done

WORK=$(mktemp -d -t bls-pipeline-bench.XXXXXX)
trap 'stop_servers; rm -rf "$WORK"' EXIT

. bench/lib/common.sh
TREE=$(tree_version) # before this run rewrites its results file

# --- models: $WORK/repo-<target>/{add_sub,ens_add_sub2,bls_add_sub2}, the same files ---------
write_models() { # DIR; the pipelines' configs are add_sub's with another name (and platform)
  make_add_sub_model "$1" add_sub
  mkdir -p "$1/ens_add_sub2/1" "$1/bls_add_sub2/1"
  {
    sed -e 's/^name: .*/name: "ens_add_sub2"/; s/^backend: .*/platform: "ensemble"/; /^instance_group/d' \
      "$1/add_sub/config.pbtxt"
    cat <<'CFG'
ensemble_scheduling {
  step [
    {
      model_name: "add_sub"
      model_version: -1
      input_map { key: "INPUT0" value: "INPUT0" }
      input_map { key: "INPUT1" value: "INPUT1" }
      output_map { key: "OUTPUT0" value: "sum" }
      output_map { key: "OUTPUT1" value: "diff" }
    },
    {
      model_name: "add_sub"
      model_version: -1
      input_map { key: "INPUT0" value: "sum" }
      input_map { key: "INPUT1" value: "diff" }
      output_map { key: "OUTPUT0" value: "OUTPUT0" }
      output_map { key: "OUTPUT1" value: "OUTPUT1" }
    }
  ]
}
CFG
  } >"$1/ens_add_sub2/config.pbtxt"
  sed 's/^name: .*/name: "bls_add_sub2"/' "$1/add_sub/config.pbtxt" >"$1/bls_add_sub2/config.pbtxt"
  cat >"$1/bls_add_sub2/1/model.py" <<'PY'
import triton_python_backend_utils as pb_utils


def add_sub(in_0, in_1):
    """One BLS call of the add_sub model: (INPUT0 + INPUT1, INPUT0 - INPUT1) as numpy arrays."""
    response = pb_utils.InferenceRequest(
        model_name="add_sub",
        inputs=[pb_utils.Tensor("INPUT0", in_0), pb_utils.Tensor("INPUT1", in_1)],
        requested_output_names=["OUTPUT0", "OUTPUT1"],
    ).exec()
    if response.has_error():
        raise pb_utils.TritonModelException(response.error().message())
    return tuple(
        pb_utils.get_output_tensor_by_name(response, name).as_numpy()
        for name in ("OUTPUT0", "OUTPUT1")
    )


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            in_0 = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            in_1 = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            total, diff = add_sub(in_0, in_1)
            out_0, out_1 = add_sub(total, diff)  # 2 * INPUT0, 2 * INPUT1
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("OUTPUT0", out_0), pb_utils.Tensor("OUTPUT1", out_1)]))
        return responses
PY
}
for t in $ALL_TARGETS; do write_models "$WORK/repo-$t"; done
add_sub_body "$WORK/add_sub.body"
perf_data "$WORK/add_sub.body" "$WORK/add_sub.data.json"

# --- per-target build and server command ---------------------------------------------------
build() { # TARGET
  case $1 in
    oxiserve) if [ "$BUILD" = 1 ]; then $OXISERVE_BUILD; fi
      [ -x target/release/oxiserve ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
declare -A EXTRA_ARGS=([oxiserve]=$OXISERVE_ARGS [triton]=$TRITON_ARGS)
cmd() { server_cmd "$1" "${PORT[$1]}" "$WORK/repo-$1" "${EXTRA_ARGS[$1]}"; } # TARGET: the server command line
check_models() { # TARGET: every measured model answers right; prints what did not
  local m err
  for m in $MODELS; do
    err=$(check_answer "${PORT[$1]}" "${MODEL[$m]}" "$WORK/add_sub.body" "${KIND[$m]}" 2>&1) ||
      { echo "wrong answer from ${MODEL[$m]}: $(tail -n 2 <<<"$err" | tr '\n' ' ')"; return 1; }
  done
}
wait_ready() { # TARGET: server ready, all three models ready, right answers
  await_ready "${PORT[$1]}" "$SERVER_PID" "$READY_TIMEOUT" add_sub ens_add_sub2 bls_add_sub2 && check_models "$1"
}

# --- benchmark ----------------------------------------------------------------------------
echo -e "target\tmodel\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx" >"$WORK/runs.tsv"
run_load() { # CONNS PORT DURATION MODEL
  perf_point "${MODEL[$4]}" "$2" "$1" "$3" --input-data "$WORK/add_sub.data.json" \
    --input-tensor-format json --output-tensor-format json
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
up=()
for t in $TARGETS; do
  BUSY[$t]=$(cpu_busy)
  log "$t: prepare (CPUs ${BUSY[$t]} busy with other work)"
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    STATUS[$t]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; log "$t: ${STATUS[$t]}"; continue
  fi
  if curl -s -o /dev/null "http://127.0.0.1:${PORT[$t]}/"; then
    STATUS[$t]="not run: port ${PORT[$t]} already in use by another process"; log "${STATUS[$t]}"; continue
  fi
  log "$t: $(cmd "$t")"
  read -ra argv <<<"$(cmd "$t")"
  "${argv[@]}" >"$WORK/$t.log" 2>&1 &
  SERVER_PID=$!
  PIDS[$t]=$SERVER_PID
  if ! why=$(wait_ready "$t"); then
    STATUS[$t]="failed ($why); server log: $(server_log_tail "$WORK/$t.log")"
    log "$t: ${STATUS[$t]}"; stop_server; unset "PIDS[$t]"; continue
  fi
  VERSION[$t]=$(server_version "${PORT[$t]}")
  up+=("$t")
done
for t in "${up[@]}"; do
  for m in $MODELS; do
    log "$t/$m: warm-up ($WARMUP at $max_conns connections)"
    run_load "$max_conns" "${PORT[$t]}" "$WARMUP" "$m" >/dev/null || true
  done
  STATUS[$t]=ok
done
[ ${#up[@]} -eq 0 ] || IDLE=$(cpu_busy)
for c in $CONCURRENCY; do
  for r in $(seq "$RUNS"); do
    for m in $MODELS; do
      for t in $(run_order "$r" "${up[@]}"); do
        out=$(run_load "$c" "${PORT[$t]}" "$DURATION" "$m" | grep '^RESULT ' || true)
        [ -n "$out" ] || { STATUS[$t]="ok, except: oxiserve-perf gave no result for $m at $c connections, run $r"; continue; }
        log "$t/$m c=$c run $r: $out"
        echo -e "$t\t${MODEL[$m]}\t$c\t$r\t$(result_fields "$out" rps p50_us p90_us p99_us errors non2xx)" >>"$WORK/runs.tsv"
      done
    done
  done
done
# each server must still answer correctly after the load
for t in "${up[@]}"; do
  err=$(check_models "$t") || STATUS[$t]="${STATUS[$t]}; WRONG ANSWER after the load: $err"
done
stop_servers

# --- report ---------------------------------------------------------------------------------
declare -A RPS=() P50=() P99=() EFF=()
for t in $ALL_TARGETS; do for m in $ALL_MODELS; do for c in $CONCURRENCY; do
  k=$t/$m/$c
  RPS[$k]=$(runs_median "$WORK/runs.tsv" rps "target=$t" "model=${MODEL[$m]}" "conns=$c")
  P50[$k]=$(runs_median "$WORK/runs.tsv" p50_us "target=$t" "model=${MODEL[$m]}" "conns=$c")
  P99[$k]=$(runs_median "$WORK/runs.tsv" p99_us "target=$t" "model=${MODEL[$m]}" "conns=$c")
  EFF[$k]=$(ratio "$([ -z "${RPS[$k]}" ] || echo $((${RPS[$k]} * ${EXECS[$m]})))" "${RPS[$t/add_sub/$c]}")
done; done; done
or_dash() { [ -n "$1" ] && echo "$1" || echo "–"; }
lo=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | head -n 1)
hi=$max_conns
complete=yes
for m in $ALL_MODELS; do [[ " $MODELS " == *" $m "* ]] || complete=no; done
for t in $ALL_TARGETS; do [[ ${STATUS[$t]:-} == ok* ]] || complete=no; done

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Pipelines: two add_sub steps as an ensemble and through BLS, oxiserve vs real Triton (KServe v2 over HTTP)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\", MODELS=\"$MODELS\"): see *Targets* for what was not measured, and why."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(machine_line); servers, their Python processes and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window per model at $max_conns connections; C keep-alive connections with one request in flight each; the same request values for every model, encoded once; both servers up at once, each point's runs alternating between them"
  echo "- At 1 connection, latency depends on whether the scheduler puts the load generator and the server on the same CPU (see bench/README.md): compare runs in *All runs*"
  echo "- Versions: oxiserve $TREE (\`target/release/oxiserve\`, built $(date -u -r target/release/oxiserve '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')), Triton ${VERSION[triton]:-?} (from nvidia-pytriton 0.7.0, Python backend)"
  echo "- Python: Triton's stubs run $(pyver "$HOME/.cache/real-triton/venv/bin/python3") (\`~/.cache/real-triton/venv\`); oxiserve's default interpreter here is \`.venv/bin/python3\`: $(pyver .venv/bin/python3)${OXISERVE_ARGS:+ (OXISERVE_ARGS may pick another)}"
  echo "- Efficiency: req/s x Python executions per request (add_sub 1, ensemble 2, BLS 3: the BLS model and its 2 calls) / add_sub's own req/s, same target and connections; 1.00 = a pipeline's executions cost what add_sub's requests do. It speaks of throughput at $max_conns connections, where the models are kept busy; at 1 connection it compares latencies"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" MODELS=\"$MODELS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" BUILD=$BUILD${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/bls_pipeline.sh"
  echo "$OXISERVE_BUILD$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# servers: both up for the whole run (\$WORK: the script's temporary folder; the models are shown below)"
  cmd oxiserve | sed "s|$WORK/|\$WORK/|"
  cmd triton | sed "s|$WORK/|\$WORK/|"
  echo "# load: port P = ${PORT[oxiserve]} (oxiserve), ${PORT[triton]} (triton); model X = $(for m in $MODELS; do echo -n "${MODEL[$m]} "; done)in turn; connections C = $CONCURRENCY"
  echo "# warm-up first: the same at C = $max_conns for $WARMUP per model; per C and run, each model on both targets, the targets alternating"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PERF -m \$X -u 127.0.0.1:\$P -i http --concurrency-range \$C --input-data \$WORK/add_sub.data.json --input-tensor-format json --output-tensor-format json -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json"
  echo '```'
  echo
  echo "Request body (JSON, INPUT0/INPUT1 FP32 [1,4], $(wc -c <"$WORK/add_sub.body") B; \$WORK/add_sub.data.json holds its values as oxiserve-perf input data). Before timing and after the load, each model must answer it right: add_sub OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1; both pipelines OUTPUT0 = 2*INPUT0 and OUTPUT1 = 2*INPUT1."
  echo
  echo '```json'
  cat "$WORK/add_sub.body"; echo
  echo '```'
  echo
  echo "Models, the same files in \$WORK/repo-oxiserve and \$WORK/repo-triton (\`add_sub/1/model.py\`: Triton's add_sub example, as in \`results/python_add_sub.md\`):"
  for f in add_sub/config.pbtxt ens_add_sub2/config.pbtxt bls_add_sub2/config.pbtxt bls_add_sub2/1/model.py; do
    echo
    echo "\`$f\`:"
    echo
    [[ $f == *.py ]] && echo '```python' || echo '```'
    cat "$WORK/repo-triton/$f"
    echo '```'
  done
  echo
  echo "## Results (medians of $RUNS runs)"
  echo
  echo "| target | model | connections | req/s | efficiency | p50 µs | p99 µs | errors + non-2xx (all runs) |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  for t in $ALL_TARGETS; do
    if [[ ${STATUS[$t]:-} != ok* ]]; then
      echo "| $t | – | – | – | – | – | – | $([ -n "${STATUS[$t]:-}" ] && echo 'failed, see *Targets*' || echo 'not run') |"; continue
    fi
    for m in $MODELS; do for c in $CONCURRENCY; do
      k=$t/$m/$c
      echo "| $t | ${MODEL[$m]} | $c | $(or_dash "${RPS[$k]}") | $([ "$m" = add_sub ] && echo "–" || echo "${EFF[$k]}") | $(or_dash "${P50[$k]}") | $(or_dash "${P99[$k]}") | $(runs_failures "$WORK/runs.tsv" "target=$t" "model=${MODEL[$m]}" "conns=$c") |"
    done; done
  done
  echo
  echo "| model | connections | req/s oxiserve/Triton | p50 oxiserve/Triton | p99 oxiserve/Triton |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  for m in $MODELS; do for c in $CONCURRENCY; do
    o=oxiserve/$m/$c tr=triton/$m/$c
    echo "| ${MODEL[$m]} | $c | $(ratio "${RPS[$o]}" "${RPS[$tr]}") | $(ratio "${P50[$o]}" "${P50[$tr]}") | $(ratio "${P99[$o]}" "${P99[$tr]}") |"
  done; done
  echo
  echo "## Goals (issue 34, \`bls_add_sub2\`)"
  echo
  goal_line "BLS efficiency at $hi connections, oxiserve" "${EFF[oxiserve/bls/$hi]}" 0.6 0.6 ge
  goal_line "BLS req/s at $hi connections, oxiserve/Triton" "$(ratio "${RPS[oxiserve/bls/$hi]}" "${RPS[triton/bls/$hi]}")" 5 5 ge
  goal_line "BLS p50 at $lo connection, oxiserve/Triton" "$(ratio "${P50[oxiserve/bls/$lo]}" "${P50[triton/bls/$lo]}")" 0.3 0.3 le
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do
    echo "- $t: ${STATUS[$t]:-not run (not in TARGETS)}"
    [ -z "${BUSY[$t]:-}" ] || echo "  (before $t: other processes kept the CPUs ${BUSY[$t]} busy over 2 s)"
  done
  [ -z "${IDLE:-}" ] || echo "- with both servers up and idle, the CPUs were $IDLE busy over 2 s"
  echo
  echo "## All runs"
  echo
  echo "| target | model | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  runs_rows "$WORK/runs.tsv"
} >"$RESULTS"
log "wrote $RESULTS"
