#!/usr/bin/env bash
# Text-embedding benchmark: seed 000's pipeline (news titles in, all-MiniLM-L6-v2 sentence
# embeddings out) through the `embedding` ensemble, side by side in the same run:
#   oxiserve - target/release/oxiserve serving examples/model_repository's embedding ensemble:
#              minilm_tokenizer (native tokenizer backend) -> minilm_encoder (onnxruntime backend,
#              dynamic batching, batch_padding PADDING); no Python
#   triton   - real Triton 2.51 (/work/shared/tools/real-triton.sh; Python backend only) serving
#              the same ensemble shape the way seed 000 does it: tokenizer (model.py, the
#              `tokenizers` package) -> encoder (model.py, onnxruntime, dynamic batching, requests
#              padded to the batch's longest in execute); bench/embedding/triton/
# Both use the same tokenizer.json and model.onnx, 1 instance of the tokenizer and 1 of the
# encoder, the same encoder intra-op threads (INTRA) and spinning setting (SPINNING), and the
# same dynamic batching (max_batch_size 64, max_queue_delay_microseconds 2000).
#
# Before measuring, each server must answer seed 000's two-title request ([2,1] BYTES) and one
# request with every reference sentence with embeddings matching tests/data/minilm_reference.json
# (cosine >= 0.9999, bench/embedding/check_answer.py); again after the load. A wrong answer is
# recorded and the run goes on.
# Load: oxiserve-perf (crates/perf) sending KServe v2 JSON, one sentence per request, rotating
# over the reference sentences (bodies from bench/embedding/make_bodies.py, the 3030-character one
# left out unless LONG=1; their values as oxiserve-perf input data), at CONCURRENCY connections
# with one request in flight each; per point the medians of RUNS runs of sentences/s, p50, p99,
# the encoder's average executed batch (GET /v2/models/<encoder>/stats: inference_count /
# execution_count over the run) and the CPU time of the server's process tree. Both servers run
# for the whole benchmark (started one at a time: time to ready is measured alone) and runs
# alternate: run 1 of every concurrency on one, then on the other, run 2 in the other order, ...
# Also: each server's time to ready and RSS / PSS (process tree) at ready and after the load.
# Results: bench/results/embedding.md.
#
#   bench/embedding.sh                                                        # 3 runs x 10 s
#   BUILD=0 RUNS=1 DURATION=2s CONCURRENCY="1 8" RESULTS=/tmp/emb.md bench/embedding.sh   # quick
#
# Settings (environment): TARGETS (oxiserve triton), RUNS (3), DURATION (10s), WARMUP (3s),
# CONCURRENCY (1 2 4 8 16 32 64), INTRA (the encoder's intra-op threads on both servers; default
# nproc / 1 instance, what oxiserve picks without the parameter), SPINNING (0: both sessions get
# session.intra_op.allow_spinning = 0, oxiserve's default; 1: spinning, ONNX Runtime's default;
# empty: neither config sets it), LONG (0; 1: the load includes the 3030-character sentence, 256
# tokens after truncation), RAGGED (1: Triton's encoder inputs have allow_ragged_batch, so that
# requests of different token lengths batch together as on oxiserve; 0: without, Triton batches
# only requests of equal length), PADDING (buckets, the example's: oxiserve sorts each encoder
# batch by token count and cuts it into runs, each padded to its own longest, where the padding
# saved outweighs BUCKET_COST (32) padded tokens per extra run; longest: every batch padded to its
# longest, as Triton's encoder does), RAW (1: after every round of runs, with both servers idle,
# bench/embedding/raw_padding.py runs the encoder alone, no server, on windows of RAW_BATCHES
# (1 2 4 8 16 32 64) consecutive sentences of the load, padded as oxiserve pads (PADDING),
# RAW_SECONDS (3) each: what ONNX Runtime computes for such batches, against which oxiserve's runs
# are compared run by run (issue 29's 0.95); 0: skip), KEEP_LOGS (a folder to copy the server logs into),
# READY_TIMEOUT (300 s), BUILD (1: cargo build --release --locked --bin oxiserve and -p
# oxiserve-perf first; 0: use the binaries as they are), OXISERVE_BIN (target/release/oxiserve),
# OXISERVE_ARGS, TRITON_ARGS (extra server flags), TRITON_VENV (~/.cache/real-triton/venv: the
# interpreter of Triton's Python models; onnxruntime==1.31.1 and tokenizers==0.23.3 are installed
# there if missing, numpy kept < 2), RESULTS (bench/results/embedding.md).
# Ports: 18460-18462 (oxiserve), 18470-18472 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 2 4 8 16 32 64}
INTRA=${INTRA:-$(nproc)}
SPINNING=${SPINNING-0}
LONG=${LONG:-0}
RAGGED=${RAGGED:-1}
PADDING=${PADDING:-buckets}
BUCKET_COST=${BUCKET_COST:-32}
RAW=${RAW:-1}
RAW_SECONDS=${RAW_SECONDS:-3}
RAW_BATCHES=${RAW_BATCHES:-1 2 4 8 16 32 64}
KEEP_LOGS=${KEEP_LOGS:-}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
OXISERVE_BIN=${OXISERVE_BIN:-target/release/oxiserve}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
TRITON_VENV=${TRITON_VENV:-$HOME/.cache/real-triton/venv}
RESULTS=${RESULTS:-bench/results/embedding.md}
CHECK=bench/embedding/check_answer.py
REF=tests/data/minilm_reference.json
EXAMPLE=examples/model_repository
ONNX=$EXAMPLE/minilm_encoder/1/model.onnx
TOKENIZER_JSON=$EXAMPLE/minilm_tokenizer/1/tokenizer.json
TRITON_SH=/work/shared/tools/real-triton.sh
TRITON_PIP=(onnxruntime==1.31.1 tokenizers==0.23.3)
ALL_TARGETS="oxiserve triton"
declare -A PORT=([oxiserve]=18460 [triton]=18470) ENCODER=([oxiserve]=minilm_encoder [triton]=encoder)
declare -A PID=() STATUS=() READY_MS=() MEM_READY=() MEM_AFTER=() BUSY=() ANSWER0=() ANSWER1=() VERSION=()

for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done
[[ $INTRA =~ ^[1-9][0-9]*$ ]] || { echo "INTRA must be a positive number" >&2; exit 2; }
[[ $SPINNING =~ ^[01]?$ ]] || { echo "SPINNING must be 0, 1 or empty" >&2; exit 2; }

log() { echo "[bench] $*" >&2; }
stop_pid() { # PID: SIGTERM, SIGKILL after 30 s
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
stop_server() { local t; for t in $ALL_TARGETS; do stop_pid "${PID[$t]:-}"; PID[$t]=; done; }

WORK=$(mktemp -d -t embedding-bench.XXXXXX)
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

# --- helpers ------------------------------------------------------------------------------------
tree_pids() { # PID: it and all its descendants
  ps -e -o pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 }
    END { for (p in parent) { q = p; while (q != "" && q > 1) { if (q == root) { print p; break } q = parent[q] } } }'
}
tree_ticks() { # PID: user + system clock ticks of the process tree, or -
  local p v s=0
  for p in $(tree_pids "$1"); do
    v=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 }' || true)
    s=$((s + ${v:-0}))
  done
  [ "$s" -gt 0 ] && echo "$s" || echo -
}
tree_mem() { # PID: "server RSS, tree RSS, tree PSS" in MiB, and the number of processes
  local p rss0 rss=0 pss=0 n=0
  rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0)
  for p in $(tree_pids "$1"); do
    rss=$((rss + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
    pss=$((pss + $(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)))
    n=$((n + 1))
  done
  awk -v a="$rss0" -v b="$rss" -v c="$pss" -v n="$n" 'BEGIN { printf "%.0f / %.0f / %.0f MiB (%d process%s)", a / 1024, b / 1024, c / 1024, n, n == 1 ? "" : "es" }'
}
TICK=$(getconf CLK_TCK)
now_ms() { date +%s%3N; }

# --- model files, repositories, bodies ----------------------------------------------------------
if [ ! -f "$ONNX" ] || [ ! -f "$TOKENIZER_JSON" ]; then
  log "model files missing: bash scripts/embedding-model.sh"
  bash scripts/embedding-model.sh >&2
fi
params() { # the encoder's session parameters, the same on both servers
  echo "parameters { key: \"intra_op_thread_count\" value: { string_value: \"$INTRA\" } }"
  [ -z "$SPINNING" ] || echo "parameters { key: \"session.intra_op.allow_spinning\" value: { string_value: \"$SPINNING\" } }"
}
R=$WORK/repo-oxiserve
for m in embedding minilm_tokenizer minilm_encoder; do
  mkdir -p "$R/$m/1"; cp "$EXAMPLE/$m/config.pbtxt" "$R/$m/"
done
ln -s "$PWD/$ONNX" "$R/minilm_encoder/1/model.onnx"
ln -s "$PWD/$TOKENIZER_JSON" "$R/minilm_tokenizer/1/tokenizer.json"
case $PADDING in
  buckets | longest) ;;
  *) echo "PADDING must be buckets or longest" >&2; exit 2 ;;
esac
sed -i "s/key: \"batch_padding\" value: { string_value: \"[a-z]*\" }/key: \"batch_padding\" value: { string_value: \"$PADDING\" }/" \
  "$R/minilm_encoder/config.pbtxt"
grep -q "string_value: \"$PADDING\"" "$R/minilm_encoder/config.pbtxt" || { echo "no batch_padding in $EXAMPLE/minilm_encoder" >&2; exit 1; }
params >>"$R/minilm_encoder/config.pbtxt"
[ "$PADDING" = longest ] ||
  echo "parameters { key: \"batch_bucket_cost\" value: { string_value: \"$BUCKET_COST\" } }" >>"$R/minilm_encoder/config.pbtxt"
R=$WORK/repo-triton
mkdir -p "$R"
cp -r bench/embedding/triton/. "$R/"
find "$R" -name __pycache__ -prune -exec rm -rf {} +
ln -s "$PWD/$ONNX" "$R/encoder/1/model.onnx"
ln -s "$PWD/$TOKENIZER_JSON" "$R/tokenizer/1/tokenizer.json"
params >>"$R/encoder/config.pbtxt"
[ "$RAGGED" = 1 ] || sed -i 's/, allow_ragged_batch: true//' "$R/encoder/config.pbtxt"
BODIES_DESC=$(python3 bench/embedding/make_bodies.py "$REF" "$WORK/bodies.jsonl" --max-chars "$([ "$LONG" = 1 ] && echo 0 || echo 1000)")
log "bodies: $BODIES_DESC"
perf_data "$WORK/bodies.jsonl" "$WORK/data.json"
tokens() { # the token count of each body's sentence ([CLS] and [SEP] included, truncated at 256)
  "$1" - "$TOKENIZER_JSON" "$WORK/bodies.jsonl" <<'PY' 2>/dev/null
import json, sys
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1]); tok.enable_truncation(max_length=256); tok.no_padding()
n = [len(tok.encode(json.loads(l)["inputs"][0]["data"][0][0]).ids) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
print(f"{' '.join(map(str, n))} (mean {sum(n) / len(n):.1f}, max {max(n)})")
PY
}

# --- build, Triton's Python packages ---------------------------------------------------------------
declare -A PREP=()
if [[ " $TARGETS " == *" oxiserve "* ]]; then
  if [ "$BUILD" = 1 ]; then
    log "cargo build --release --locked --bin oxiserve"
    cargo build --release --locked --bin oxiserve >"$WORK/build.log" 2>&1 ||
      PREP[oxiserve]="build failed: $(tail -n 3 "$WORK/build.log" | tr '\n' ' ')"
  fi
  [ -n "${PREP[oxiserve]:-}" ] || [ -x "$OXISERVE_BIN" ] || PREP[oxiserve]="no $OXISERVE_BIN"
fi
triton_pkgs() { # the versions in TRITON_VENV, or fails
  "$TRITON_VENV/bin/python" -c 'import numpy, onnxruntime, tokenizers
assert int(numpy.__version__.split(".")[0]) < 2, "numpy " + numpy.__version__
print(f"onnxruntime {onnxruntime.__version__}, tokenizers {tokenizers.__version__}, numpy {numpy.__version__}")' 2>/dev/null
}
if [[ " $TARGETS " == *" triton "* ]]; then
  if [ ! -f "$TRITON_SH" ]; then
    PREP[triton]="no $TRITON_SH"
  else
    # the first start of real-triton.sh installs Triton and its venv
    [ -x "$TRITON_VENV/bin/python" ] || bash "$TRITON_SH" --help >"$WORK/triton-install.log" 2>&1 || true
    want="onnxruntime ${TRITON_PIP[0]#*==}, tokenizers ${TRITON_PIP[1]#*==}"
    if [[ "$(triton_pkgs || true)" != "$want"* ]]; then
      log "$TRITON_VENV/bin/pip install ${TRITON_PIP[*]} 'numpy<2'"
      "$TRITON_VENV/bin/pip" install -q --disable-pip-version-check "${TRITON_PIP[@]}" 'numpy<2' >"$WORK/pip.log" 2>&1 ||
        PREP[triton]="pip install into $TRITON_VENV failed: $(tail -n 2 "$WORK/pip.log" | tr '\n' ' ')"
    fi
    TRITON_PKGS=$(triton_pkgs || true)
    TOKENS=$(tokens "$TRITON_VENV/bin/python" || true)
    [ -n "${PREP[triton]:-}" ] || [[ "$TRITON_PKGS" == "$want"* ]] ||
      PREP[triton]="$TRITON_VENV lacks $want with numpy < 2 (has: ${TRITON_PKGS:-?})"
  fi
fi

# --- servers --------------------------------------------------------------------------------------
cmd() { # TARGET: the server command line
  local p=${PORT[$1]}
  local ports="--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))"
  case $1 in
    oxiserve) echo "$OXISERVE_BIN --model-repository=$WORK/repo-oxiserve $ports${OXISERVE_ARGS:+ $OXISERVE_ARGS}" ;;
    triton) echo "bash $TRITON_SH --model-repository=$WORK/repo-triton $ports${TRITON_ARGS:+ $TRITON_ARGS}" ;;
  esac
}
wait_ready() { # TARGET: prints the milliseconds from start to GET /v2/health/ready = 200
  local base="http://127.0.0.1:${PORT[$1]}" t0=$2 deadline=$((SECONDS + READY_TIMEOUT))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/health/ready" || true)" = 200 ]; do
    kill -0 "${PID[$1]}" 2>/dev/null || { echo "exited before ready"; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${READY_TIMEOUT}s"; return 1; }
    sleep 0.05
  done
  echo $(($(now_ms) - t0))
  local m; for m in embedding "${ENCODER[$1]}"; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/models/$m/ready" || true)" = 200 ] ||
      { echo "server ready but model $m not ready"; return 1; }
  done
}
PERF_ARGS="--input-data $WORK/data.json --input-tensor-format json --output-tensor-format json"
run_load() { # TARGET CONNS DURATION
  # shellcheck disable=SC2086
  perf_point embedding "${PORT[$1]}" "$2" "$3" $PERF_ARGS
}

max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
LIVE=
for t in $TARGETS; do
  if [ -n "${PREP[$t]:-}" ]; then STATUS[$t]="not run: ${PREP[$t]}"; log "$t: ${STATUS[$t]}"; continue; fi
  if curl -s -o /dev/null "http://127.0.0.1:${PORT[$t]}/"; then
    STATUS[$t]="not run: port ${PORT[$t]} already in use by another process"; log "${STATUS[$t]}"; continue
  fi
  BUSY[$t]=$(cpu_busy)
  log "$t: $(cmd "$t") (CPUs ${BUSY[$t]} busy with other work)"
  t0=$(now_ms)
  $(cmd "$t") >"$WORK/$t.log" 2>&1 &
  PID[$t]=$!
  if ! out=$(wait_ready "$t" "$t0"); then
    STATUS[$t]="failed ($(tail -n 1 <<<"$out")); server log: $(server_log_tail "$WORK/$t.log")"
    log "$t: ${STATUS[$t]}"; stop_pid "${PID[$t]}"; PID[$t]=; continue
  fi
  READY_MS[$t]=$(head -n 1 <<<"$out")
  sleep 1
  MEM_READY[$t]=$(tree_mem "${PID[$t]}")
  VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
  if ans=$(python3 "$CHECK" "${PORT[$t]}" embedding "$REF" 2>&1); then
    ANSWER0[$t]=$ans STATUS[$t]=ok
  else
    ANSWER0[$t]="WRONG ANSWER: $(tail -n 1 <<<"$ans")"; STATUS[$t]="measured, but the answer before the load was wrong"
  fi
  log "$t: ready in ${READY_MS[$t]} ms; ${ANSWER0[$t]}; memory ${MEM_READY[$t]}"
  LIVE="$LIVE $t"
done
for t in $LIVE; do
  log "$t: warm-up ($WARMUP at $max_conns connections)"
  run_load "$t" "$max_conns" "$WARMUP" >/dev/null
done

RAW_PY=
if [ "$RAW" = 1 ]; then
  for py in "$TRITON_VENV/bin/python" .venv/bin/python; do
    "$py" -c 'import onnxruntime, tokenizers' 2>/dev/null && { RAW_PY=$py; break; }
  done
  [ -n "$RAW_PY" ] || log "raw encoder: no Python with onnxruntime and tokenizers; skipped"
fi
RAW_BUCKETS=$([ "$PADDING" = longest ] || echo "--buckets $BUCKET_COST")
raw_run() { # RUN: the encoder alone, every batch size of RAW_BATCHES, appended to raw.tsv
  log "raw encoder, run $1: $RAW_PY bench/embedding/raw_padding.py ... $INTRA '$SPINNING' $RAW_SECONDS $RAW_BATCHES"
  # shellcheck disable=SC2086
  "$RAW_PY" bench/embedding/raw_padding.py $RAW_BUCKETS "$ONNX" "$TOKENIZER_JSON" "$WORK/bodies.jsonl" "$INTRA" "$SPINNING" \
    "$RAW_SECONDS" $RAW_BATCHES 2>"$WORK/raw.err" | tee -a "$WORK/raw.txt" |
    sed -n "s/^RAW batch=\([^ ]*\) sentences_per_s=\([^ ]*\) run_ms=\([^ ]*\) tokens_per_row=\([^ ]*\)$/$1\t\1\t\2\t\3\t\4/p" >>"$WORK/raw.tsv" ||
    log "raw_padding.py failed: $(tail -n 1 "$WORK/raw.err")"
}

# --- benchmark ------------------------------------------------------------------------------------
echo -e "run\tbatch\tsps\trun_ms\ttokens" >"$WORK/raw.tsv"
echo -e "target\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx\tinferences\texecutions\tbatch\tserver_cores" >"$WORK/runs.tsv"
order=$LIVE
for r in $(seq "$RUNS"); do
  for t in $order; do
    for c in $CONCURRENCY; do
      before=$(model_counts "${PORT[$t]}" "${ENCODER[$t]}"); k0=$(tree_ticks "${PID[$t]}")
      out=$(run_load "$t" "$c" "$DURATION" | grep '^RESULT ' || true)
      k1=$(tree_ticks "${PID[$t]}"); after=$(model_counts "${PORT[$t]}" "${ENCODER[$t]}")
      [ -n "$out" ] || { STATUS[$t]="${STATUS[$t]}; oxiserve-perf gave no result at $c connections, run $r"; log "$t c=$c run $r: no result"; continue; }
      for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
      read -r i0 e0 <<<"${before:-- -}"; read -r i1 e1 <<<"${after:-- -}"
      if [[ $i0$e0$i1$e1 =~ ^[0-9]+$ ]] && [ $((e1 - e0)) -gt 0 ]; then
        inf=$((i1 - i0)) exe=$((e1 - e0)) batch=$(ratio $((i1 - i0)) $((e1 - e0)))
      else
        inf=– exe=– batch=–
      fi
      cores=$([[ $k0$k1 =~ ^[0-9]+$ ]] && awk -v a="$k0" -v b="$k1" -v t="$TICK" -v d="$duration_s" 'BEGIN { printf "%.2f", (b - a) / t / d }' || echo –)
      log "$t c=$c run $r: $out batch=$batch server_cores=$cores"
      echo -e "$t\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx\t$inf\t$exe\t$batch\t$cores" >>"$WORK/runs.tsv"
    done
  done
  [ -z "$RAW_PY" ] || raw_run "$r" # with both servers idle, after every round: the same drift as the runs
  order=$(tr ' ' '\n' <<<"$order" | tac | tr '\n' ' ') # the other one first next time
done
for t in $LIVE; do
  MEM_AFTER[$t]=$(tree_mem "${PID[$t]}")
  if ans=$(python3 "$CHECK" "${PORT[$t]}" embedding "$REF" 2>&1); then
    ANSWER1[$t]=$ans
  else
    ANSWER1[$t]="WRONG ANSWER: $(tail -n 1 <<<"$ans")"; STATUS[$t]="${STATUS[$t]}; WRONG ANSWER after the load"
  fi
  # Triton's CPU-only build logs two CUDA errors at every start (no GPU here): not counted
  grep -vE 'CudaDriverHelper has not been initialized|CUDA driver version is insufficient' "$WORK/$t.log" >"$WORK/$t.errlog" || true
  errs=$(grep -cE '^E[0-9]{4} |ERROR|panicked' "$WORK/$t.errlog" || true)
  [ "$errs" = 0 ] || STATUS[$t]="${STATUS[$t]}; $errs error lines in the server log: $(server_log_tail "$WORK/$t.errlog")"
  log "$t: after the load: ${ANSWER1[$t]}; memory ${MEM_AFTER[$t]}"
done
[ -z "$KEEP_LOGS" ] || { mkdir -p "$KEEP_LOGS"; cp "$WORK"/*.log "$KEEP_LOGS/" 2>/dev/null || true; }
LIBRARY=$(grep -o 'onnxruntime backend: loaded .*' "$WORK/oxiserve.log" 2>/dev/null | head -n 1 | sed 's/.*loaded //' || true)
stop_server

[ -n "${TOKENS:-}" ] || TOKENS=$(tokens .venv/bin/python || true)
# --- report ---------------------------------------------------------------------------------------
median() { # TARGET CONNS COLUMN [FORMAT] -> median over runs, or empty
  awk -F'\t' -v t="$1" -v c="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t && $2 == c && $col[k] != "–" { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk -v f="${4:-%.0f}" '{ a[NR] = $1 } END { if (NR) printf f, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
total() { awk -F'\t' -v t="$1" -v c="$2" '$1 == t && $2 == c { n += $8 + $9 } END { print n + 0 }' "$WORK/runs.tsv"; }
or_dash() { [ -n "$1" ] && echo "$1" || echo "–"; }
raw_batches() { awk -F'\t' 'NR > 1 { print $2 }' "$WORK/raw.tsv" | sort -nu; }
raw_median() { # BATCH COLUMN [FORMAT] -> median over the raw runs
  awk -F'\t' -v b="$1" -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $2 == b { print $col[k] }' \
    "$WORK/raw.tsv" | sort -g |
    awk -v f="${3:-%.0f}" '{ a[NR] = $1 } END { if (NR) printf f, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
nearest_batch() { # AVG_BATCH -> the raw batch size nearest it
  [ -n "$1" ] && [ "$1" != – ] || return 0
  raw_batches | awk -v a="$1" '{ d = $1 - a; d = d < 0 ? -d : d; if (NR == 1 || d < best) { best = d; b = $1 } } END { if (NR) print b }'
}
raw_pairs() { # CONNS BATCH -> per oxiserve run at CONNS with a raw run r at BATCH (tab-separated):
  # run, avg batch, oxiserve sentences/s, raw sentences/s, their ratio
  awk -F'\t' -v c="$1" -v b="$2" 'FNR == 1 { next } FILENAME ~ /raw/ { if ($2 == b) raw[$1] = $3; next }
    $1 == "oxiserve" && $2 == c && ($3 in raw) && raw[$3] > 0 {
      printf "%s\t%s\t%.1f\t%.1f\t%.3f\n", $3, $12, $4, raw[$3], $4 / raw[$3] }' "$WORK/raw.tsv" "$WORK/runs.tsv"
}
raw_ratio() { # CONNS BATCH -> median over runs of the ratios of raw_pairs
  raw_pairs "$1" "$2" | cut -f5 | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
compared() { # -> "CONNS BATCH" for each concurrency with an average batch, BATCH the raw batch nearest it
  local c b
  for c in $CONCURRENCY; do
    b=$(nearest_batch "${BATCH[oxiserve/$c]:-}")
    [ -z "$b" ] || echo "$c $b"
  done
}
declare -A RPS=() P50=() P99=() BATCH=() CORES=()
for t in $ALL_TARGETS; do for c in $CONCURRENCY; do
  k=$t/$c
  RPS[$k]=$(median "$t" "$c" rps); P50[$k]=$(median "$t" "$c" p50_us); P99[$k]=$(median "$t" "$c" p99_us)
  BATCH[$k]=$(median "$t" "$c" batch %.2f); CORES[$k]=$(median "$t" "$c" server_cores %.2f)
done; done
complete=yes
for t in $ALL_TARGETS; do [[ ${STATUS[$t]:-} == ok ]] || complete=no; done
repo_path() { sed "s|$WORK/|\$WORK/|g; s|$HOME/|~/|g"; }
ms() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }' || echo "–"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Text embeddings: seed 000's ensemble, oxiserve (no Python) vs real Triton (Python backend), KServe v2 over HTTP"
  echo
  if [ $complete = no ]; then
    echo "**Partial or flawed run** (TARGETS=\"$TARGETS\"): see *Status* for what was not measured or went wrong, and why."
    echo
  fi
  echo "Sentences in, all-MiniLM-L6-v2 sentence embeddings (FP32 [384]) out, through the \`embedding\` ensemble (tokenizer -> encoder with dynamic batching), one sentence per request, at growing concurrency. oxiserve serves \`examples/model_repository\`'s pipeline (native \`tokenizer\` backend -> \`onnxruntime\` backend, no Python); real Triton serves the same pipeline the way seed 000 does it, as two Python-backend models (\`bench/embedding/triton/\`: \`tokenizers\` in one \`model.py\`, \`onnxruntime\` in the other). Same \`tokenizer.json\` and \`model.onnx\`, same instance counts, threads and batching on both."
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); both servers and oxiserve-perf share the CPUs, nothing pinned. Other processes kept the CPUs busy before each start:$(for t in $TARGETS; do echo -n " $t ${BUSY[$t]:-?};"; done | sed 's/;$//') (over 2 s)"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)') (\`$OXISERVE_BIN\`, built $(date -u -r "$OXISERVE_BIN" '+%Y-%m-%d %H:%M UTC' 2>/dev/null || echo '?')$([ "$BUILD" = 1 ] || echo ', not rebuilt: BUILD=0')), loading \`$(sed "s|$PWD/||; s|$HOME/|~/|" <<<"${LIBRARY:-?}")\`; Triton ${VERSION[triton]:-?} (nvidia-pytriton 0.7.0, Python backend), its models running Python $("$TRITON_VENV/bin/python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo '?') with ${TRITON_PKGS:-?} (\`$(sed "s|$HOME/|~/|" <<<"$TRITON_VENV")\`)"
  echo "- Pipeline on both: tokenizer 1 instance, no dynamic batching, truncation at 256 tokens, each request's rows padded to its longest; encoder 1 instance (KIND_CPU), \`max_batch_size: 64\`, \`dynamic_batching { max_queue_delay_microseconds: 2000 }\`, $([ "$PADDING" = longest ] && echo "a batch's requests padded to the batch's longest and run as one \`session.run\` / ONNX Runtime call on both" || echo "oxiserve: \`batch_padding: \"buckets\"\` (\`batch_bucket_cost\` $BUCKET_COST): a batch sorted by token count and cut into runs, each padded to its own longest, one ONNX Runtime call per run; Triton: a batch's requests padded to the batch's longest and run as one \`session.run\` (Triton has no such cut)"), $INTRA intra-op thread(s), $([ -n "$SPINNING" ] && echo "\`session.intra_op.allow_spinning\` = $SPINNING" || echo "spinning left at each side's default"), all graph optimizations, sequential execution; Triton's encoder inputs $([ "$RAGGED" = 1 ] && echo "have \`allow_ragged_batch: true\` (Triton's dynamic batcher otherwise batches only requests of equal shape, i.e. equal token length; oxiserve's \`batch_padding\` is the counterpart)" || echo "have no \`allow_ragged_batch\` (RAGGED=0): Triton batches only requests of equal token length"); ensemble \`max_batch_size: 64\`"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $max_conns connections per server; C keep-alive connections with one request in flight each; KServe v2 JSON, one sentence per request (\`[1,1]\` BYTES), JSON output, rotating over the sentences of \`$REF\` ($BODIES_DESC; connection i starts at sentence i). Sentences/s = requests/s. Both servers stay up the whole time (the one not measured idles); runs alternate: run 1 of every concurrency on one server, then on the other, run 2 in the other order, ..."
  echo "- Average batch: the encoder's (inference_count after - before) / (execution_count after - before) of \`GET /v2/models/<encoder>/stats\` around each run (\`minilm_encoder\` on oxiserve, \`encoder\` on Triton). *Server cores*: user + system CPU time of the server's process tree (Triton: tritonserver and its Python stub processes) over the whole oxiserve-perf run / its wall time"
  echo
  echo "## Results (medians of $RUNS runs)"
  echo
  echo "| connections | sentences/s oxiserve | sentences/s Triton | oxiserve/Triton | p50 ms oxiserve | p50 ms Triton | p50 oxiserve/Triton | p99 ms oxiserve | p99 ms Triton | p99 oxiserve/Triton | avg batch oxiserve | avg batch Triton | server cores oxiserve / Triton | errors + non-2xx oxiserve / Triton |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for c in $CONCURRENCY; do
    o=oxiserve/$c tr=triton/$c
    echo "| $c | $(or_dash "${RPS[$o]}") | $(or_dash "${RPS[$tr]}") | **$(ratio "${RPS[$o]}" "${RPS[$tr]}")** | $(ms "${P50[$o]}") | $(ms "${P50[$tr]}") | $(ratio "${P50[$o]}" "${P50[$tr]}") | $(ms "${P99[$o]}") | $(ms "${P99[$tr]}") | $(ratio "${P99[$o]}" "${P99[$tr]}") | $(or_dash "${BATCH[$o]}") | $(or_dash "${BATCH[$tr]}") | $(or_dash "${CORES[$o]}") / $(or_dash "${CORES[$tr]}") | $(total oxiserve "$c") / $(total triton "$c") |"
  done
  echo
  echo "Latency ratios below 1 mean oxiserve is faster."
  [ -z "${TOKENS:-}" ] || { echo; echo "Token counts of the load's sentences, in rotation order ([CLS] and [SEP] included): ${TOKENS}. $([ "$PADDING" = longest ] && echo "Both encoders pad a batch's rows to its longest, so a batch holding the longest sentence runs every row at that length: batching saves per-call overhead but adds padding work, and larger batches hold the longest sentence more often." || echo "Triton's encoder pads a batch's rows to its longest, so a batch holding the longest sentence runs every row at that length, and larger batches hold it more often; oxiserve's buckets run the short sentences apart from the long ones.")"; }
  echo
  if [ -n "$(raw_batches)" ]; then
    echo "## oxiserve against the encoder alone"
    echo
    echo "\`bench/embedding/raw_padding.py\` after every round of runs, with both servers idle: one onnxruntime session on the same \`model.onnx\` ($(sed "s|$HOME/|~/|" <<<"$RAW_PY"), $INTRA intra-op threads, spinning ${SPINNING:-default}, all graph optimizations, sequential execution), no server, run back to back on windows of B consecutive sentences of the load, $([ "$PADDING" = longest ] && echo "each padded to its longest and run as one call" || echo "each cut into runs as oxiserve's buckets cut a batch (\`--buckets $BUCKET_COST\`, the same rule) and run as one call per run padded to its longest"), ${RAW_SECONDS} s per B: what ONNX Runtime computes for such batches on this machine. Raw run r follows server run r, so both see the same machine; *oxiserve/raw* is the median of the per-run ratios, oxiserve's run r at C connections over raw run r at the batch size nearest oxiserve's average batch there (issue 29 asks for 0.95).$([ "$PADDING" = longest ] || echo " With buckets this is not like for like: each run's requests are answered when it returns, the short ones first, so their clients come back sooner and oxiserve's batches hold more short sentences than raw's windows of consecutive ones. A ratio above 1 says that, not that the server computes faster than ONNX Runtime; \`PADDING=longest\` is the like-for-like comparison.")"
    echo
    echo "| connections | oxiserve avg batch | raw batch B | sentences/s oxiserve | sentences/s raw at B | oxiserve/raw |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
    compared | while read -r c b; do
      echo "| $c | ${BATCH[oxiserve/$c]} | $b | $(or_dash "${RPS[oxiserve/$c]}") | $(raw_median "$b" sps) | **$(or_dash "$(raw_ratio "$c" "$b")")** |"
    done
    echo
    echo "Run by run (each oxiserve run beside the raw run that followed it):"
    echo
    echo "| connections | run | oxiserve avg batch | sentences/s oxiserve | raw batch B | sentences/s raw at B | oxiserve/raw |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    compared | while read -r c b; do
      raw_pairs "$c" "$b" | awk -F'\t' -v c="$c" -v b="$b" '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", c, $1, $2, $3, b, $4, $5 }'
    done
    echo
    echo "Each batch size alone (medians of the raw runs):"
    echo
    echo "| batch B | sentences/s | ms per batch | padded tokens per row |"
    echo "| ---: | ---: | ---: | ---: |"
    for b in $(raw_batches); do
      echo "| $b | $(raw_median "$b" sps %.1f) | $(raw_median "$b" run_ms %.2f) | $(raw_median "$b" tokens %.1f) |"
    done
    echo
  fi
  echo "## Start, memory, answers"
  echo
  echo "Time to ready: the server command's start to \`GET /v2/health/ready\` = 200 (polled every 50 ms), each server started alone. Memory: server process RSS / whole process tree RSS / whole tree PSS (\`/proc/<pid>/smaps_rollup\`; RSS counts shared pages in every process, PSS shares them out), 1 s after ready and after the last run."
  echo
  echo "| server | time to ready s | memory at ready | memory after the load | answer before the load | answer after the load |"
  echo "| --- | ---: | --- | --- | --- | --- |"
  for t in $ALL_TARGETS; do
    echo "| $t | $(ms "${READY_MS[$t]:-}") | $(or_dash "${MEM_READY[$t]:-}") | $(or_dash "${MEM_AFTER[$t]:-}") | $(or_dash "${ANSWER0[$t]:-}") | $(or_dash "${ANSWER1[$t]:-}") |"
  done
  echo
  echo "Answers: \`bench/embedding/check_answer.py\` sends seed 000's two-title request (\`[2,1]\` BYTES, as in the seed's curl example) and one request with all $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$REF") reference sentences (including the empty one and the 3030-character one, padded together), and compares every embedding with sentence-transformers' (\`$REF\`): cosine >= 0.9999 required."
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP CONCURRENCY=\"$CONCURRENCY\" INTRA=$INTRA SPINNING=$SPINNING LONG=$LONG RAGGED=$RAGGED PADDING=$PADDING BUCKET_COST=$BUCKET_COST RAW=$RAW RAW_SECONDS=$RAW_SECONDS RAW_BATCHES=\"$RAW_BATCHES\" BUILD=$BUILD$([ "$OXISERVE_BIN" = target/release/oxiserve ] || echo " OXISERVE_BIN=$OXISERVE_BIN")${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/embedding.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "$(sed "s|$HOME/|~/|" <<<"$TRITON_VENV")/bin/pip install ${TRITON_PIP[*]} 'numpy<2'   # only when missing"
  echo "python3 bench/embedding/make_bodies.py $REF \$WORK/bodies.jsonl --max-chars $([ "$LONG" = 1 ] && echo 0 || echo 1000)"
  [ -z "$RAW_PY" ] || echo "$(sed "s|$HOME/|~/|" <<<"$RAW_PY") bench/embedding/raw_padding.py${RAW_BUCKETS:+ $RAW_BUCKETS} $ONNX $TOKENIZER_JSON \$WORK/bodies.jsonl $INTRA '$SPINNING' $RAW_SECONDS $RAW_BATCHES   # after every round of runs, servers idle"
  echo "# \$WORK/repo-oxiserve: $EXAMPLE/{embedding,minilm_tokenizer,minilm_encoder}/config.pbtxt, model files symlinked, the encoder's parameters appended (below)"
  echo "# \$WORK/repo-triton: bench/embedding/triton/ (embedding, tokenizer, encoder), the same model files symlinked, the same parameters appended"
  echo "# both servers, started one after the other (\$WORK: the script's temporary folder)"
  cmd oxiserve
  cmd triton
  echo "python3 $CHECK \$P embedding $REF   # before and after the load; P = ${PORT[oxiserve]} (oxiserve), ${PORT[triton]} (triton)"
  echo "# warm-up: the same at C = $max_conns for $WARMUP; around each run: curl -s http://127.0.0.1:\$P/v2/models/\$ENCODER/stats"
  echo "# \$WORK/data.json: the sentences of \$WORK/bodies.jsonl as oxiserve-perf input data, one entry per body (perf_data in bench/lib/common.sh)"
  echo "$PERF -m embedding -u 127.0.0.1:\$P -i http --concurrency-range \$C $PERF_ARGS -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json   # C = $CONCURRENCY"
  echo '```'
  echo
  echo "One request body (the first line of \`\$WORK/bodies.jsonl\`):"
  echo
  echo '```json'
  head -n 1 "$WORK/bodies.jsonl"
  echo '```'
  echo
  echo "oxiserve's \`minilm_encoder\` as served (\`$EXAMPLE/minilm_encoder/config.pbtxt\` + the appended parameters); the ensemble and \`minilm_tokenizer\` are the example's unchanged:"
  echo
  echo '```'
  grep -v '^#' "$WORK/repo-oxiserve/minilm_encoder/config.pbtxt"
  echo '```'
  echo
  echo "Triton's \`encoder\` as served (\`bench/embedding/triton/encoder/config.pbtxt\` + the same parameters; \`model.py\` next to it; \`tokenizer\` and \`embedding\` in \`bench/embedding/triton/\`):"
  echo
  echo '```'
  grep -v '^#' "$WORK/repo-triton/encoder/config.pbtxt"
  echo '```'
  echo
  echo "## Status"
  echo
  for t in $ALL_TARGETS; do echo "- $t: ${STATUS[$t]:-not run (TARGETS)}"; done
  echo
  echo "## All runs"
  echo
  echo "| target | connections | run | sentences/s | p50 µs | p90 µs | p99 µs | errors | non-2xx | encoder inferences | encoder executions | avg batch | server cores |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} | repo_path >"$RESULTS"
log "wrote $RESULTS"
