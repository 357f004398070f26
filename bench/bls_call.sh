#!/usr/bin/env bash
# The latency of one BLS call, measured inside the calling model (issue 34): a Python model
# (`bls_time`) runs CALLS calls of pb_utils.InferenceRequest(model_name="add_sub", ...).exec()
# in one execute, one after the other, timing each with time.perf_counter, and answers the
# median and mean µs of an exec() and the mean µs of building the InferenceRequest. No HTTP
# or load generator is on the path: what is left is the call itself (stub -> server ->
# called model's stub -> back). Targets, all up at once, each run alternating between them:
#   oxiserve-S - target/release/oxiserve with --backend-config=python,idle-spin-microseconds=S
#                for each S of SPINS (how long its Python processes and pumps poll for the
#                next frame before they sleep; 300 is the default)
#   triton     - real Triton (/work/shared/tools/real-triton.sh), the same models
#
# With PIN_CPU=N every server (and so its Python processes) runs on CPU N alone: each
# hand-over between the caller's process, the server and the called model's process is
# then a context switch on that CPU, never a wake-up of another (idle) CPU, and an exec()
# takes the CPU time of the call's work. Pair it with SPINS=0 (polling on one CPU only
# takes turns from the work).
#
#   bench/bls_call.sh
#   SPINS="0 300 1000" TARGETS="oxiserve triton" CALLS=3000 RUNS=3 bench/bls_call.sh
#   PIN_CPU=0 SPINS=0 CALLS=10000 RESULTS=bench/results/bls_call_pinned.md bench/bls_call.sh
#
# Settings (environment): TARGETS (oxiserve triton), SPINS (300), CALLS (3000), RUNS (3),
# PIN_CPU (unset), BUILD (1: cargo build the release server first), RESULTS
# (bench/results/bls_call.md).
# Ports: 18800 + 10 x i for the i-th target (HTTP; gRPC and metrics on the next two).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
SPINS=${SPINS:-300}
CALLS=${CALLS:-3000}
RUNS=${RUNS:-3}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/bls_call.md}
WORK=$(mktemp -d -t bls-call.XXXXXX)
declare -A PIDS=() PORTS=()
trap 'stop_servers; rm -rf "$WORK"' EXIT

. bench/lib/common.sh
TREE=$(tree_version) # before this run rewrites its results file

if [ "$BUILD" = 1 ]; then cargo build --release --locked -p oxiserve; fi

# The models: Triton's add_sub, and the timing model calling it.
REPO=$WORK/repo
make_add_sub_model "$REPO" add_sub
mkdir -p "$REPO/bls_time/1"
cat >"$REPO/bls_time/config.pbtxt" <<'CFG'
name: "bls_time"
backend: "python"
max_batch_size: 0
input [ { name: "N", data_type: TYPE_INT32, dims: [ 1 ] } ]
output [ { name: "US", data_type: TYPE_FP64, dims: [ 3 ] } ]
instance_group [ { count: 1, kind: KIND_CPU } ]
CFG
cat >"$REPO/bls_time/1/model.py" <<'PY'
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    """N calls of add_sub, one after the other: US = median and mean µs of an exec(), and
    the mean µs of building its InferenceRequest."""

    def execute(self, requests):
        responses = []
        for request in requests:
            n = int(pb_utils.get_input_tensor_by_name(request, "N").as_numpy()[0])
            in_0 = np.arange(4, dtype=np.float32).reshape(1, 4)
            in_1 = np.ones((1, 4), np.float32)
            calls, building = [], 0.0
            for _ in range(n):
                t0 = time.perf_counter()
                call = pb_utils.InferenceRequest(
                    model_name="add_sub",
                    inputs=[pb_utils.Tensor("INPUT0", in_0), pb_utils.Tensor("INPUT1", in_1)],
                    requested_output_names=["OUTPUT0", "OUTPUT1"])
                t1 = time.perf_counter()
                response = call.exec()
                if response.has_error():
                    raise pb_utils.TritonModelException(response.error().message())
                out = pb_utils.get_output_tensor_by_name(response, "OUTPUT0").as_numpy()
                t2 = time.perf_counter()
                if not np.array_equal(out, in_0 + in_1):
                    raise pb_utils.TritonModelException("add_sub answered %s" % out)
                building += t1 - t0
                calls.append(t2 - t1)
            calls.sort()
            us = np.array([calls[n // 2], sum(calls) / n, building / n], np.float64) * 1e6
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("US", us)]))
        return responses
PY

# Targets: one oxiserve per idle-spin setting, and Triton.
NAMES=()
i=0
for target in $TARGETS; do
  if [ "$target" = oxiserve ]; then
    for spin in $SPINS; do NAMES+=("oxiserve-$spin"); done
  else
    NAMES+=("$target")
  fi
done
for name in "${NAMES[@]}"; do
  port=$((18800 + 10 * i)); i=$((i + 1)); PORTS[$name]=$port
  case $name in
    oxiserve-*) cmd=$(server_cmd oxiserve "$port" "$REPO" "--backend-config=python,idle-spin-microseconds=${name#oxiserve-}") ;;
    *) cmd=$(server_cmd "$name" "$port" "$REPO") ;;
  esac
  if [ -n "${PIN_CPU:-}" ]; then cmd="taskset -c $PIN_CPU $cmd"; fi
  log "starting $name: $cmd"
  $cmd >"$WORK/$name.log" 2>&1 &
  PIDS[$name]=$!
done
for name in "${NAMES[@]}"; do
  await_ready "${PORTS[$name]}" "${PIDS[$name]}" 300 add_sub bls_time ||
    { server_log_tail "$WORK/$name.log"; exit 1; }
done

call_times() { # PORT: "median mean build" µs of one bls_time request of CALLS calls
  curl -sf "http://127.0.0.1:$1/v2/models/bls_time/infer" \
    -d "{\"inputs\":[{\"name\":\"N\",\"shape\":[1],\"datatype\":\"INT32\",\"data\":[$CALLS]}]}" |
    python3 -c 'import json, sys; print(" ".join("%.1f" % v for v in json.load(sys.stdin)["outputs"][0]["data"]))'
}

# A short warm-up on each, then RUNS runs alternating between the targets.
for name in "${NAMES[@]}"; do CALLS=200 call_times "${PORTS[$name]}" >/dev/null; done
printf 'target\trun\tmedian\tmean\tbuild\n' >"$WORK/runs.tsv"
for run in $(seq 1 "$RUNS"); do
  for name in $(run_order "$run" "${NAMES[@]}"); do
    read -r median mean build <<<"$(call_times "${PORTS[$name]}")"
    log "$name run $run: exec() median $median µs, mean $mean µs, request built in $build µs"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$run" "$median" "$mean" "$build" >>"$WORK/runs.tsv"
  done
done

median_of() { # TARGET COLUMN: the median over the runs
  awk -F'\t' -v t="$1" -v c="$2" 'NR > 1 && $1 == t { print $c }' "$WORK/runs.tsv" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

{
  echo "# One BLS call, timed inside the calling model (oxiserve vs real Triton)"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); oxiserve $TREE"
  echo "- Machine: $(machine_line); the servers and their Python processes share the CPUs, nothing pinned"
  echo "- Each run: one request to \`bls_time\`, whose execute makes $CALLS calls of \`add_sub\` (Triton's example) one after the other; $RUNS runs per target, alternating; all targets up at once"
  if [ -n "${PIN_CPU:-}" ]; then
    echo "- Every server and its Python processes on CPU $PIN_CPU alone (\`taskset -c $PIN_CPU\`): an exec() is the CPU time of the call's work, without waking an idle CPU"
  fi
  echo
  echo '```sh'
  echo "${PIN_CPU:+PIN_CPU=$PIN_CPU }TARGETS=\"$TARGETS\" SPINS=\"$SPINS\" CALLS=$CALLS RUNS=$RUNS bench/bls_call.sh"
  echo '```'
  echo
  echo "## Results (µs, medians of the runs)"
  echo
  echo "| target | exec() median | exec() mean | building the request |"
  echo "| --- | ---: | ---: | ---: |"
  for name in "${NAMES[@]}"; do
    echo "| $name | $(median_of "$name" 3) | $(median_of "$name" 4) | $(median_of "$name" 5) |"
  done
  if [ -n "${PORTS[triton]:-}" ]; then
    echo
    echo "exec() median, oxiserve/Triton:"
    echo
    for name in "${NAMES[@]}"; do
      [ "$name" = triton ] || echo "- $name: $(ratio "$(median_of "$name" 3)" "$(median_of triton 3)")"
    done
  fi
  echo
  echo "## All runs"
  echo
  echo "| target | run | exec() median | exec() mean | building the request |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  runs_rows "$WORK/runs.tsv"
} >"$RESULTS"
log "wrote $RESULTS"
