#!/usr/bin/env bash
# ONNX Runtime backend throughput: oxiserve (`backend: "onnxruntime"`, dynamic batching) against
# raw ONNX Runtime (Python session.run, back to back, same version, same threads) in the same run.
#
# Models (written by bench/onnx/make_models.py, fixed seed, opset 17, dynamic batch dimension):
#   mlp      X FP32 [N,1024] -> 3 x 1024 hidden (MatMul+Add+Relu) -> Y [N,256]     (6.8 MFLOP/row)
#   encoder  X FP32 [N,64,256] -> 2 transformer encoder blocks (4-head self-attention, residual +
#            LayerNormalization, FFN 256->1024->256 GELU, residual + LayerNormalization)
#            -> Y [N,64,256]                                                      (210 MFLOP/row)
# Setups (SETUPS, "COUNTxINTRA"): COUNT instances / sessions of INTRA intra-op threads each.
# For each model and setup:
#   raw      bench/onnx/raw_ort.py: COUNT onnxruntime sessions (intra_op_num_threads INTRA),
#            one Python thread each calling session.run back to back on a fixed batch of
#            B = RAW_BATCHES rows for RAW_DURATION seconds; rows/s per B, the best B = "raw"
#   server   target/release/oxiserve serving the model: max_batch_size MAX_BATCH,
#            dynamic_batching { max_queue_delay_microseconds: QUEUE_DELAY_US },
#            instance_group [{ count: COUNT, kind: KIND_CPU }], intra_op_thread_count INTRA;
#            oxiserve-perf (crates/perf) sending one row per request (KServe v2, binary tensor
#            extension: the row of make_models.py's request body, binary output) at CONCURRENCY
#            connections, one request in flight each: rows/s (= req/s), p50, p99, the average
#            executed batch (GET /v2/models/<m>/stats: inference_count / execution_count over the
#            run), the CPU time of oxiserve-perf (its own user + system time, /proc/self/stat) and
#            of the server (/proc/PID/stat) over each oxiserve-perf run
# Headline: server rows/s at its best concurrency / raw rows/s at the best batch size; the goal
# is >= 0.90. Results: bench/results/onnx_throughput.md (medians of RUNS runs, and every run).
# Raw and server runs alternate (raw run 1 of every batch size, server run 1 of every concurrency,
# raw run 2, ...; the server is started before and idles during raw runs), so that changes in
# the machine's speed hit both alike. oxiserve-perf and the server share the CPUs (nothing
# pinned); raw runs alone.
#
#   bench/onnx_throughput.sh                                              # 3 runs x 10 s
#   BUILD=0 RUNS=1 DURATION=2s RAW_DURATION=1 RESULTS=/tmp/ot.md bench/onnx_throughput.sh   # quick
#
# Settings (environment): MODELS (mlp encoder), SETUPS (1x2 2x1), RUNS (3), DURATION (10s),
# WARMUP (3s), RAW_DURATION (5, seconds per batch size and run), RAW_BATCHES (1 8 16 32 64),
# CONCURRENCY (1 8 32 64 128), MAX_BATCH (64), QUEUE_DELAY_US (1000), MEM_ARENA (unset: no
# enable_mem_arena parameter; 1 or 0: the server's config gets that value), SPINNING (unset: the
# server's default; 1 or 0: session.intra_op.allow_spinning), READY_TIMEOUT (120 s),
# BUILD (1: cargo build the release oxiserve and oxiserve-perf first; 0: use the binaries as they
# are), OXISERVE_BIN
# (target/release/oxiserve), OXISERVE_ARGS (extra server flags), PYTHON (.venv/bin/python),
# RESULTS (bench/results/onnx_throughput.md).
# Ports: 18440-18442.
set -euo pipefail
cd "$(dirname "$0")/.."

MODELS=${MODELS:-mlp encoder}
SETUPS=${SETUPS:-1x2 2x1}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
RAW_DURATION=${RAW_DURATION:-5}
RAW_BATCHES=${RAW_BATCHES:-1 8 16 32 64}
CONCURRENCY=${CONCURRENCY:-1 8 32 64 128}
MAX_BATCH=${MAX_BATCH:-64}
QUEUE_DELAY_US=${QUEUE_DELAY_US:-1000}
MEM_ARENA=${MEM_ARENA:-}
SPINNING=${SPINNING:-}
READY_TIMEOUT=${READY_TIMEOUT:-120}
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
PYTHON=${PYTHON:-.venv/bin/python}
RESULTS=${RESULTS:-bench/results/onnx_throughput.md}
PORT=18440
declare -A DIMS=([mlp]="1024" [encoder]="64, 256") ODIMS=([mlp]="256" [encoder]="64, 256")
declare -A STATUS=() BUSY=() OVERHEAD=() DESC=()

for m in $MODELS; do [ -n "${DIMS[$m]:-}" ] || { echo "unknown model '$m'" >&2; exit 2; }; done
for s in $SETUPS; do [[ $s =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "bad setup '$s' (COUNTxINTRA)" >&2; exit 2; }; done

WORK=$(mktemp -d -t onnx-throughput-bench.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh
TICK=$(getconf CLK_TCK)

# --- models, request bodies, reference outputs ------------------------------------------------
log "models: $PYTHON bench/onnx/make_models.py \$WORK/data"
"$PYTHON" bench/onnx/make_models.py "$WORK/data" >"$WORK/models.txt"
while IFS= read -r line; do DESC[${line%%:*}]=${line#*: }; done <"$WORK/models.txt"
# oxiserve-perf's input data: the row of each request body (the same FP32 values, sent as binary)
for m in $MODELS; do perf_data "$WORK/data/$m.body" "$WORK/data/$m.data.json" "$(cat "$WORK/data/$m.hlen")"; done

model_repo() { # MODEL SETUP -> repository folder
  local dir=$WORK/repo-$1-$2 count=${2%x*} intra=${2#*x}
  mkdir -p "$dir/$1/1"
  ln -sf "$WORK/data/models/$1.onnx" "$dir/$1/1/model.onnx"
  cat >"$dir/$1/config.pbtxt" <<CFG
name: "$1"
backend: "onnxruntime"
max_batch_size: $MAX_BATCH
input [ { name: "X", data_type: TYPE_FP32, dims: [ ${DIMS[$1]} ] } ]
output [ { name: "Y", data_type: TYPE_FP32, dims: [ ${ODIMS[$1]} ] } ]
dynamic_batching { max_queue_delay_microseconds: $QUEUE_DELAY_US }
instance_group [ { count: $count, kind: KIND_CPU } ]
parameters { key: "intra_op_thread_count" value: { string_value: "$intra" } }
CFG
  [ -z "$MEM_ARENA" ] || echo "parameters { key: \"enable_mem_arena\" value: { string_value: \"$MEM_ARENA\" } }" >>"$dir/$1/config.pbtxt"
  [ -z "$SPINNING" ] || echo "parameters { key: \"session.intra_op.allow_spinning\" value: { string_value: \"$SPINNING\" } }" >>"$dir/$1/config.pbtxt"
  echo "$dir"
}

cmd() { # REPO
  echo "$OXISERVE_BIN --model-repository=$1 --http-port=$PORT --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2))${OXISERVE_ARGS:+ $OXISERVE_ARGS}"
}
wait_ready() { # MODEL: server ready, model ready, right answer
  await_ready "$PORT" "$SERVER_PID" "$READY_TIMEOUT" "$1" || return 1
  local out
  out=$("$PYTHON" bench/onnx/check_answer.py "$PORT" "$1" "$WORK/data" 2>&1) ||
    { echo "wrong answer: $(tail -n 2 <<<"$out" | tr '\n' ' ')"; return 1; }
  echo "$out"
}
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo -; }
perf_args() { # MODEL: how oxiserve-perf sends the model's requests
  echo "--input-data $WORK/data/$1.data.json --input-tensor-format binary --output-tensor-format binary"
}
run_load() { # CONNS DURATION MODEL
  # shellcheck disable=SC2046
  perf_point "$3" "$PORT" "$1" "$2" $(perf_args "$3")
}

# --- benchmark ----------------------------------------------------------------------------------
if [ "$BUILD" = 1 ]; then
  log "cargo build --release --locked --bin oxiserve"
  cargo build --release --locked --bin oxiserve >"$WORK/build.log" 2>&1 ||
    { log "build failed: $(tail -n 5 "$WORK/build.log")"; BUILD_FAILED=1; }
fi
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
echo -e "model\tsetup\tbatch\trun\trows_per_s\tcalls\tcall_p50_us\tcall_p99_us" >"$WORK/raw.tsv"
echo -e "model\tsetup\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tinferences\texecutions\tbatch\tperf_cores\tserver_cores" >"$WORK/runs.tsv"
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
raw_run() { # MODEL SETUP RUN: one raw_ort.py run of every batch size into raw.tsv
  local m=$1 s=$2 r=$3 k=$1/$2 out=$WORK/raw.$1.$2.$3.out
  if "$PYTHON" bench/onnx/raw_ort.py "$WORK/data/models/$m.onnx" --intra "${s#*x}" --sessions "${s%x*}" \
    --batches "$(tr ' ' ',' <<<"$RAW_BATCHES")" --duration "$RAW_DURATION" --runs 1 >"$out" 2>&1; then
    grep '^RAW ' "$out" | while read -r _ kvs; do
      for kv in $kvs; do declare "${kv%%=*}=${kv#*=}"; done
      log "$k raw batch=$batch run=$r: $rows_per_s rows/s"
      echo -e "$m\t$s\t$batch\t$r\t$rows_per_s\t$calls\t$call_p50_us\t$call_p99_us" >>"$WORK/raw.tsv"
    done
    OVERHEAD[$k]="${OVERHEAD[$k]:+${OVERHEAD[$k]}, }$(grep '^OVERHEAD ' "$out" | sed 's/^OVERHEAD call_p50_us=\([^ ]*\) call_mean_us=\(.*\)/\1 \/ \2/')"
    RAW_VERSION=$(grep '^VERSION ' "$out" | sed 's/^VERSION //')
  else
    STATUS[$k]="${STATUS[$k]:+${STATUS[$k]}; }raw baseline run $r failed: $(tail -n 3 "$out" | tr '\n' ' ')"; log "${STATUS[$k]}"
  fi
}
for m in $MODELS; do
  for s in $SETUPS; do
    k=$m/$s server=yes
    BUSY[$k]=$(cpu_busy)
    log "$k: CPUs ${BUSY[$k]} busy with other work"
    # a fresh server holding only the model; idle while the raw baseline runs
    if [ -n "${BUILD_FAILED:-}" ] || [ ! -x "$OXISERVE_BIN" ]; then
      STATUS[$k]="server not run: no $OXISERVE_BIN${BUILD_FAILED:+ (build failed)}"; server=
    elif curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
      STATUS[$k]="server not run: port $PORT already in use by another process"; log "${STATUS[$k]}"; server=
    else
      repo=$(model_repo "$m" "$s")
      log "$k server: $(cmd "$repo")"
      $(cmd "$repo") >"$WORK/server.$m.$s.log" 2>&1 &
      SERVER_PID=$!
      if ! why=$(wait_ready "$m"); then
        STATUS[$k]="server failed ($why); log: $(server_log_tail "$WORK/server.$m.$s.log")"
        log "${STATUS[$k]}"; stop_server; server=
      else
        STATUS[$k]="answer before the load: $why"
        LIBRARY=$(grep -o 'onnxruntime backend: loaded .*' "$WORK/server.$m.$s.log" | head -n 1 | sed 's/.*loaded //')
        log "$k: $why; warm-up ($WARMUP at $max_conns connections)"
        run_load "$max_conns" "$WARMUP" "$m" >/dev/null
      fi
    fi
    # runs alternate: raw (every batch size), then the server (every concurrency), RUNS times
    for r in $(seq "$RUNS"); do
      log "$k raw run $r: $PYTHON bench/onnx/raw_ort.py ... --intra ${s#*x} --sessions ${s%x*} --runs 1"
      raw_run "$m" "$s" "$r"
      [ -n "$server" ] || continue
      for c in $CONCURRENCY; do
        before=$(model_counts "$PORT" "$m"); t0=$(proc_ticks "$SERVER_PID")
        out=$(run_load "$c" "$DURATION" "$m" | grep '^RESULT ' || true)
        t1=$(proc_ticks "$SERVER_PID"); after=$(model_counts "$PORT" "$m")
        [ -n "$out" ] || { STATUS[$k]="${STATUS[$k]}; oxiserve-perf gave no result at $c connections, run $r"; continue; }
        for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
        read -r i0 e0 <<<"${before:-- -}"; read -r i1 e1 <<<"${after:-- -}"
        if [[ $i0$e0$i1$e1 =~ ^[0-9]+$ ]] && [ $((e1 - e0)) -gt 0 ]; then
          inf=$((i1 - i0)) exe=$((e1 - e0)) batch=$(ratio $((i1 - i0)) $((e1 - e0)))
        else
          inf=– exe=– batch=–
        fi
        perf_cores=$(awk -v c="$tool_cpu_s" -v d="$duration_s" 'BEGIN { printf "%.2f", c / d }')
        server_cores=$([[ $t0$t1 =~ ^[0-9]+$ ]] && awk -v a="$t0" -v b="$t1" -v t="$TICK" -v d="$duration_s" 'BEGIN { printf "%.2f", (b - a) / t / d }' || echo –)
        log "$k c=$c run $r: $out batch=$batch perf_cores=$perf_cores server_cores=$server_cores"
        echo -e "$m\t$s\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx\t$inf\t$exe\t$batch\t$perf_cores\t$server_cores" >>"$WORK/runs.tsv"
      done
    done
    [ -n "$server" ] || continue
    # the server must still answer correctly after the load
    if err=$("$PYTHON" bench/onnx/check_answer.py "$PORT" "$m" "$WORK/data" 2>&1); then
      STATUS[$k]="${STATUS[$k]}; after the load: $err"
    else
      STATUS[$k]="${STATUS[$k]}; WRONG ANSWER after the load: $(tail -n 1 <<<"$err")"
    fi
    errs=$(grep -cE '^E[0-9]{4} ' "$WORK/server.$m.$s.log" || true)
    [ "$errs" = 0 ] || STATUS[$k]="${STATUS[$k]}; $errs error lines in the server log: $(server_log_tail "$WORK/server.$m.$s.log")"
    stop_server
  done
done

# --- report -----------------------------------------------------------------------------------
median() { # FILE KEYCOLS(a=b,...) COLUMN [FORMAT] -> median over the matching rows, or empty
  awk -F'\t' -v keys="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(keys, kv, ","); next }
    { for (j = 1; j <= n; j++) { split(kv[j], p, "="); if ($col[p[1]] != p[2]) next } if ($col[k] != "–" && $col[k] != "") print $col[k] }' "$1" |
    sort -g | awk -v f="${4:-%.0f}" '{ a[NR] = $1 } END { if (NR) printf f, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
or_dash() { [ -n "$1" ] && echo "$1" || echo "–"; }
total_errors() { awk -F'\t' -v m="$1" -v s="$2" -v c="$3" '$1 == m && $2 == s && $3 == c { n += $9 + $10 } END { print n + 0 }' "$WORK/runs.tsv"; }
declare -A RAW=() RAWB=() SRV=() SRVC=()
for m in $MODELS; do for s in $SETUPS; do
  k=$m/$s
  for b in $RAW_BATCHES; do
    v=$(median "$WORK/raw.tsv" "model=$m,setup=$s,batch=$b" rows_per_s)
    if [ -n "$v" ] && { [ -z "${RAW[$k]:-}" ] || [ "$v" -gt "${RAW[$k]}" ]; }; then RAW[$k]=$v RAWB[$k]=$b; fi
  done
  for c in $CONCURRENCY; do
    v=$(median "$WORK/runs.tsv" "model=$m,setup=$s,conns=$c" rps)
    if [ -n "$v" ] && { [ -z "${SRV[$k]:-}" ] || [ "$v" -gt "${SRV[$k]}" ]; }; then SRV[$k]=$v SRVC[$k]=$c; fi
  done
done; done
best_of() { # ARRAY MODEL -> "value setup" of the best setup
  local -n arr=$1; local s best= bs=
  for s in $SETUPS; do v=${arr[$2/$s]:-}; if [ -n "$v" ] && { [ -z "$best" ] || [ "$v" -gt "$best" ]; }; then best=$v bs=$s; fi; done
  echo "$best $bs"
}
verdict() { # RATIO
  [ "$1" = – ] && echo "not measured" && return
  awk -v r="$1" 'BEGIN { exit !(r >= 0.90) }' && echo "**met** ($1 >= 0.90)" || echo "**not met** ($1 < 0.90)"
}
complete=yes
for m in mlp encoder; do for s in 1x2 2x1; do
  [[ " $MODELS " == *" $m "* && " $SETUPS " == *" $s "* && -n "${RAW[$m/$s]:-}" && -n "${SRV[$m/$s]:-}" ]] || complete=no
done; done
repo_path() { sed "s|$WORK/|\$WORK/|g"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# ONNX Runtime backend: oxiserve with dynamic batching vs raw ONNX Runtime (KServe v2 over HTTP)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (MODELS=\"$MODELS\", SETUPS=\"$SETUPS\"): see *Status* for what was not measured, and why."
    echo
  fi
  echo "An MLP and a transformer-style encoder served by oxiserve's \`onnxruntime\` backend with dynamic batching, one row per request, against the same models run by ONNX Runtime directly (Python \`session.run\` back to back, same ONNX Runtime version and threads, best batch size), in the same run. Goal: the server reaches >= 90% of the raw throughput."
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r). The server and oxiserve-perf share the CPUs, nothing pinned; the raw baseline runs alone (no HTTP, no load generator; the server idles meanwhile), so the server is at a disadvantage by the CPU time oxiserve-perf and HTTP take (columns *perf cores* and *server cores*)."
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)') (\`$OXISERVE_BIN\`, built $(date -u -r "$OXISERVE_BIN" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')); the server loaded \`$(sed "s|$PWD/||" <<<"${LIBRARY:-?}")\`; the raw baseline ran ${RAW_VERSION:-?} ($(pyver "$PYTHON")) — the same \`onnxruntime==1.31.1\` wheel: its Python binding (\`capi/onnxruntime_pybind11_state*.so\`) has ONNX Runtime compiled in, the server \`dlopen\`s the wheel's \`capi/libonnxruntime.so.1.31.1\`: same version and build, not the same file"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $max_conns connections; C keep-alive connections with one request in flight each; the same one-row request sent over and over (the input row of make_models.py's request body, binary tensor extension, binary output asked for with \`binary_data_output\`); *perf cores* = oxiserve-perf's user + system CPU time (its own report, from \`/proc/self/stat\`) / its wall time, *server cores* = the server's CPU time (\`/proc/PID/stat\`) over the same oxiserve-perf run / that wall time"
  echo "- Raw baseline: \`bench/onnx/raw_ort.py\`, per setup COUNTxINTRA: COUNT sessions with \`intra_op_num_threads\` = INTRA, \`inter_op_num_threads\` = 1, sequential execution, all graph optimizations, CPU provider, each run back to back by its own Python thread on a fixed random batch; $RUNS runs of ${RAW_DURATION} s per batch size after a short warm-up (one \`raw_ort.py --runs 1\` per run), alternating with the server's runs: raw run 1, server run 1 (every concurrency), raw run 2, ...; *call* latencies are of one \`session.run\`"
  echo "- Average batch: (inference_count after - before) / (execution_count after - before) of \`GET /v2/models/<m>/stats\` around each run"
  echo
  echo "## Headline"
  echo
  echo "Medians of $RUNS runs. *raw* = the best batch size's rows/s, *server* = the best concurrency's rows/s (one row per request, so rows/s = requests/s)."
  echo
  echo "| model | setup (instances x intra-op threads) | raw rows/s (batch) | server rows/s (connections) | server/raw | server p50 / p99 µs at that point | avg batch |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
  for m in $MODELS; do for s in $SETUPS; do
    k=$m/$s c=${SRVC[$m/$s]:-}
    echo "| $m | $s | $(or_dash "${RAW[$k]:-}")${RAWB[$k]:+ (${RAWB[$k]})} | $(or_dash "${SRV[$k]:-}")${c:+ ($c)} | $(ratio "${SRV[$k]:-}" "${RAW[$k]:-}") | $([ -n "$c" ] && echo "$(median "$WORK/runs.tsv" "model=$m,setup=$s,conns=$c" p50_us) / $(median "$WORK/runs.tsv" "model=$m,setup=$s,conns=$c" p99_us)" || echo –) | $([ -n "$c" ] && or_dash "$(median "$WORK/runs.tsv" "model=$m,setup=$s,conns=$c" batch %.2f)" || echo –) |"
  done; done
  echo
  for m in $MODELS; do
    read -r rb rs <<<"$(best_of RAW "$m")"; read -r sb ss <<<"$(best_of SRV "$m")"
    r=$(ratio "$sb" "$rb")
    echo "- **$m**: goal (server >= 90% of raw) $(verdict "$r"): the server's best ($(or_dash "$sb") rows/s, setup ${ss:-–}) / raw's best ($(or_dash "$rb") rows/s, setup ${rs:-–}, batch ${RAWB[$m/$rs]:-–}). Per setup (same threads on both sides):$(for s in $SETUPS; do echo -n " $s $(ratio "${SRV[$m/$s]:-}" "${RAW[$m/$s]:-}");"; done | sed 's/;$//')."
  done
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "MODELS=\"$MODELS\" SETUPS=\"$SETUPS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP RAW_DURATION=$RAW_DURATION RAW_BATCHES=\"$RAW_BATCHES\" CONCURRENCY=\"$CONCURRENCY\" MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US${MEM_ARENA:+ MEM_ARENA=$MEM_ARENA}${SPINNING:+ SPINNING=$SPINNING} BUILD=$BUILD$([ "$OXISERVE_BIN" = target/release/oxiserve ] || echo " OXISERVE_BIN=$OXISERVE_BIN")${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"} bench/onnx_throughput.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$PYTHON bench/onnx/make_models.py \$WORK/data    # models, request bodies, onnxruntime's answers (\$WORK: the script's temporary folder)"
  echo "# per model M and setup S = COUNTxINTRA: a fresh server holding only M, then RUNS times: raw run, server runs"
  echo "$PYTHON bench/onnx/raw_ort.py \$WORK/data/models/\$M.onnx --intra \$INTRA --sessions \$COUNT --batches $(tr ' ' ',' <<<"$RAW_BATCHES") --duration $RAW_DURATION --runs 1"
  cmd "\$WORK/repo-\$M-\$S"
  echo "$PYTHON bench/onnx/check_answer.py $PORT \$M \$WORK/data   # before and after the load"
  echo "# warm-up: the same at C = $max_conns for $WARMUP; around each run: curl -s http://127.0.0.1:$PORT/v2/models/\$M/stats"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# \$WORK/data/\$M.data.json: the input row of \$WORK/data/\$M.body as oxiserve-perf input data (perf_data in bench/lib/common.sh)"
  echo "$PERF -m \$M -u 127.0.0.1:$PORT -i http --concurrency-range \$C $(perf_args '$M') -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json   # C = $CONCURRENCY"
  echo '```'
  echo
  echo "Models (\`bench/onnx/make_models.py\`, seed 0):"
  echo
  for m in $MODELS; do echo "- $m: ${DESC[$m]:-?}"; done
  echo
  echo "Request (mlp): make_models.py's body, which check_answer.py sends, is the JSON header below, then the row's $(($(wc -c <"$WORK/data/mlp.body") - $(cat "$WORK/data/mlp.hlen"))) bytes of little-endian FP32 (\`Inference-Header-Content-Length: $(cat "$WORK/data/mlp.hlen")\`); oxiserve-perf sends the same row the same way, its header asking for binary output with \`\"parameters\":{\"binary_data_output\":true}\` instead of per output:"
  echo
  echo '```json'
  head -c "$(cat "$WORK/data/mlp.hlen")" "$WORK/data/mlp.body"; echo
  echo '```'
  echo
  for m in $MODELS; do
    s=${SETUPS%% *}
    [ -f "$WORK/repo-$m-$s/$m/config.pbtxt" ] || continue
    echo "Model \`$m\`, setup $s (other setups: \`count\` and \`intra_op_thread_count\` changed):"
    echo
    echo '```'
    cat "$WORK/repo-$m-$s/$m/config.pbtxt"
    echo '```'
    echo
  done
  echo "## Raw ONNX Runtime (medians of $RUNS runs)"
  echo
  echo "| model | setup | batch | rows/s | call p50 µs | call p99 µs |"
  echo "| --- | --- | ---: | ---: | ---: | ---: |"
  for m in $MODELS; do for s in $SETUPS; do for b in $RAW_BATCHES; do
    key="model=$m,setup=$s,batch=$b"
    echo "| $m | $s | $b | $(or_dash "$(median "$WORK/raw.tsv" "$key" rows_per_s)") | $(or_dash "$(median "$WORK/raw.tsv" "$key" call_p50_us)") | $(or_dash "$(median "$WORK/raw.tsv" "$key" call_p99_us)") |"
  done; done; done
  echo
  echo "Python's own cost per \`session.run\`, p50 / mean µs per run (a one-element Identity model, same session options; 20000 calls):$(for m in $MODELS; do for s in $SETUPS; do echo -n " $m/$s: ${OVERHEAD[$m/$s]:-–};"; done; done | sed 's/;$//'). Next to the call times above (hundreds of µs and up), that is negligible."
  echo
  echo "## Server (medians of $RUNS runs)"
  echo
  echo "| model | setup | connections | rows/s | server/raw best | p50 µs | p90 µs | p99 µs | avg batch | perf cores | server cores | errors + non-2xx |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for m in $MODELS; do for s in $SETUPS; do for c in $CONCURRENCY; do
    key="model=$m,setup=$s,conns=$c" rps=$(median "$WORK/runs.tsv" "model=$m,setup=$s,conns=$c" rps)
    echo "| $m | $s | $c | $(or_dash "$rps") | $(ratio "$rps" "${RAW[$m/$s]:-}") | $(or_dash "$(median "$WORK/runs.tsv" "$key" p50_us)") | $(or_dash "$(median "$WORK/runs.tsv" "$key" p90_us)") | $(or_dash "$(median "$WORK/runs.tsv" "$key" p99_us)") | $(or_dash "$(median "$WORK/runs.tsv" "$key" batch %.2f)") | $(or_dash "$(median "$WORK/runs.tsv" "$key" perf_cores %.2f)") | $(or_dash "$(median "$WORK/runs.tsv" "$key" server_cores %.2f)") | $(total_errors "$m" "$s" "$c") |"
  done; done; done
  echo
  echo "## Status"
  echo
  for m in $MODELS; do for s in $SETUPS; do
    echo "- $m, $s: ${STATUS[$m/$s]:-ok} (before it, other processes kept the CPUs ${BUSY[$m/$s]:-?} busy over 2 s)"
  done; done
  echo
  echo "## All runs"
  echo
  echo "Raw ONNX Runtime:"
  echo
  echo "| model | setup | batch | run | rows/s | calls | call p50 µs | call p99 µs |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/raw.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
  echo
  echo "Server:"
  echo
  echo "| model | setup | connections | run | rows/s | p50 µs | p90 µs | p99 µs | errors | non-2xx | inferences | executions | avg batch | perf cores | server cores |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} | repo_path >"$RESULTS"
log "wrote $RESULTS"
