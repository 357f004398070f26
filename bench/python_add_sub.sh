#!/usr/bin/env bash
# Python backend benchmark: Triton's python_backend `add_sub` example model.py
# (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, FP32 dims [4]; max_batch_size 8,
# dynamic_batching {}, 1 CPU instance) served unchanged by
#   oxiserve - target/release/oxiserve (its Python backend)
#   triton   - real Triton (/work/shared/tools/real-triton.sh)
# KServe v2 JSON over HTTP/1.1, load from oxiserve-perf (crates/perf) at 1, 8, 64 connections
# (one request in flight each), RUNS windows of DURATION per point,
# medians of req/s, p50, p99 and the ratios oxiserve/Triton; bench/results/python_add_sub.md.
#
# Per variant, both targets' servers are up at once and the measured runs alternate between
# them (oxiserve, triton, then triton, oxiserve, ...): this VM's speed drifts by tens of
# percent within minutes, and alternating puts both targets in the same phases.
#
# Variants (VARIANTS, each served by fresh servers holding only its model):
#   fp32  - `add_sub`: JSON FP32 [1,4] x 2 (the goals apply to this one)
#   bytes - `add_sub_bytes`: the same model.py shape with TYPE_STRING [4] inputs; OUTPUT0 =
#           INPUT0 + INPUT1 and OUTPUT1 = INPUT1 + INPUT0, element-wise bytes concatenation
#           (informational: BYTES decoding and encoding)
#   1mib  - `add_sub_1mib`: add_sub with FP32 [262144] (1 MiB per tensor), inputs and outputs
#           as binary data (KServe binary tensor extension), so copies dominate (informational)
#
#   bench/python_add_sub.sh                                   # everything: 5 runs x 10 s
#   TARGETS=triton RUNS=2 DURATION=3s VARIANTS=fp32 bench/python_add_sub.sh   # quick, one side
#
# Settings (environment): TARGETS (oxiserve triton), VARIANTS (fp32 bytes 1mib), RUNS (5),
# DURATION (10s), WARMUP (3s), CONCURRENCY (1 8 64), READY_TIMEOUT (300 s), BUILD (1: cargo
# build the release oxiserve first; 0: use target/release/oxiserve as it is), OXISERVE_ARGS,
# TRITON_ARGS (extra server flags), RESULTS (bench/results/python_add_sub.md).
# A target that fails to build, start, load the model or answer correctly is reported in the
# results (with the tail of its log) and the run goes on.
# Ports: 18350-18352 (oxiserve), 18360-18362 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
VARIANTS=${VARIANTS:-fp32 bytes 1mib}
RUNS=${RUNS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONCURRENCY=${CONCURRENCY:-1 8 64}
READY_TIMEOUT=${READY_TIMEOUT:-300}
BUILD=${BUILD:-1}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
RESULTS=${RESULTS:-bench/results/python_add_sub.md}
TRITON_SH=/work/shared/tools/real-triton.sh
ALL_TARGETS="oxiserve triton"
ALL_VARIANTS="fp32 bytes 1mib"
declare -A PORT=([oxiserve]=18350 [triton]=18360)
declare -A MODEL=([fp32]=add_sub [bytes]=add_sub_bytes [1mib]=add_sub_1mib)
declare -A STATUS=() VERSION=() BUSY=() BUILT=() PIDS=() IDLE=()

for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done
for v in $VARIANTS; do [ -n "${MODEL[$v]:-}" ] || { echo "unknown variant '$v'" >&2; exit 2; }; done

WORK=$(mktemp -d -t python-add-sub-bench.XXXXXX)
trap 'stop_servers; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

stop_servers() { # every server this script started
  local t
  for t in "${!PIDS[@]}"; do SERVER_PID=${PIDS[$t]}; stop_server; done
  PIDS=()
}

# --- the model: Triton's add_sub example, byte for byte the same in both repositories -------
# write_model DIR VARIANT: DIR/<model>/{config.pbtxt,1/model.py}
write_model() {
  local name=${MODEL[$2]} type=TYPE_FP32 dims=4
  case $2 in bytes) type=TYPE_STRING ;; 1mib) dims=262144 ;; esac
  mkdir -p "$1/$name/1"
  cat >"$1/$name/config.pbtxt" <<CFG
name: "$name"
backend: "python"
max_batch_size: 8
input [
  { name: "INPUT0", data_type: $type, dims: [ $dims ] },
  { name: "INPUT1", data_type: $type, dims: [ $dims ] }
]
output [
  { name: "OUTPUT0", data_type: $type, dims: [ $dims ] },
  { name: "OUTPUT1", data_type: $type, dims: [ $dims ] }
]
dynamic_batching { }
instance_group [ { count: 1, kind: KIND_CPU } ]
CFG
  if [ "$2" = bytes ]; then
    local out0='in_0.as_numpy() + in_1.as_numpy()' out1='in_1.as_numpy() + in_0.as_numpy()'
  else
    local out0='in_0.as_numpy() + in_1.as_numpy()' out1='in_0.as_numpy() - in_1.as_numpy()'
  fi
  # the BYTES variant swaps the subtraction, which bytes lack, for the reversed concatenation
  add_sub_model_py "$out0" "$out1" >"$1/$name/1/model.py"
}
for t in $ALL_TARGETS; do for v in $ALL_VARIANTS; do write_model "$WORK/repo-$t/$v" "$v"; done; done

# --- request bodies (the correctness check sends them; the load sends the same values) -------
# fp32, bytes: JSON. 1mib: a JSON header + INPUT0 + INPUT1 raw little-endian FP32, the header
# length in BODY_HEADER_LEN (sent as Inference-Header-Content-Length), binary outputs asked for.
python3 - "$WORK" <<'PY'
import array, json, sys
work = sys.argv[1]
def inp(name, dt, shape, data=None, binary=None):
    d = {"name": name, "shape": shape, "datatype": dt}
    if data is not None: d["data"] = data
    if binary is not None: d["parameters"] = {"binary_data_size": binary}
    return d
json.dump({"inputs": [inp("INPUT0", "FP32", [1, 4], [1.0, 2.0, 3.0, 4.0]),
                      inp("INPUT1", "FP32", [1, 4], [0.5, 0.25, -1.5, 8.0])]},
          open(f"{work}/fp32.body", "w"), separators=(",", ":"))
json.dump({"inputs": [inp("INPUT0", "BYTES", [1, 4], ["alpha", "beta", "gamma", "delta"]),
                      inp("INPUT1", "BYTES", [1, 4], ["one", "two", "three", "four"])]},
          open(f"{work}/bytes.body", "w"), separators=(",", ":"))
n = 262144
a = array.array("f", (float(i % 1000) * 0.5 for i in range(n)))
b = array.array("f", (1.0 + i % 7 for i in range(n)))
assert a.itemsize == 4 and sys.byteorder == "little"
header = json.dumps({"inputs": [inp("INPUT0", "FP32", [1, n], binary=4 * n),
                                inp("INPUT1", "FP32", [1, n], binary=4 * n)],
                     "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}},
                                 {"name": "OUTPUT1", "parameters": {"binary_data": True}}]},
                    separators=(",", ":")).encode()
with open(f"{work}/1mib.body", "wb") as f:
    f.write(header + a.tobytes() + b.tobytes())
open(f"{work}/1mib.header_len", "w").write(str(len(header)))
PY
# oxiserve-perf's input data: the JSON bodies' values; 1mib sends zeros in binary tensors
# (the values do not change the cost).
for v in fp32 bytes; do perf_data "$WORK/$v.body" "$WORK/$v.data.json"; done
declare -A DESC=(
  [fp32]="JSON, INPUT0/INPUT1 FP32 [1,4] ($(wc -c <"$WORK/fp32.body") B body)"
  [bytes]="JSON, INPUT0/INPUT1 BYTES [1,4] (4 short strings each; $(wc -c <"$WORK/bytes.body") B body)"
  [1mib]="binary tensor extension, INPUT0/INPUT1 FP32 [1,262144] (1 MiB each; $(wc -c <"$WORK/1mib.body") B body), outputs asked as binary"
)

# check VARIANT PORT: one request with the benchmark body must give the right outputs
check() {
  python3 - "$1" "$2" "$WORK/$1.body" "$(cat "$WORK/1mib.header_len")" "${MODEL[$1]}" <<'PY'
import array, http.client, json, sys
variant, port, body_path, hlen, model = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
body = open(body_path, "rb").read()
headers = {"Content-Type": "application/json"}
if variant == "1mib":
    headers["Inference-Header-Content-Length"] = str(hlen)
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
c.request("POST", f"/v2/models/{model}/infer", body, headers)
r = c.getresponse()
data = r.read()
if r.status != 200:
    sys.exit(f"HTTP {r.status}: {data[:300]!r}")
rh = r.getheader("Inference-Header-Content-Length")
ans = json.loads(data[: int(rh)] if rh else data)
outs = {o["name"]: o for o in ans["outputs"]}
if variant == "1mib":
    req = json.loads(body[:hlen])
    n = req["inputs"][0]["shape"][1]
    a = array.array("f"); a.frombytes(body[hlen:hlen + 4 * n])
    b = array.array("f"); b.frombytes(body[hlen + 4 * n:])
    want = {"OUTPUT0": [x + y for x, y in zip(a, b)], "OUTPUT1": [x - y for x, y in zip(a, b)]}
    pos = int(rh)
    for o in ans["outputs"]:  # binary outputs follow the header in the order listed
        size = o["parameters"]["binary_data_size"]
        o["data"] = array.array("f", data[pos:pos + size]).tolist()
        pos += size
    shape, dt = [1, n], "FP32"
else:
    req = json.loads(body)
    x, y = (i["data"] for i in req["inputs"])
    if variant == "bytes":
        want = {"OUTPUT0": [p + q for p, q in zip(x, y)], "OUTPUT1": [q + p for p, q in zip(x, y)]}
        shape, dt = [1, 4], "BYTES"
    else:
        want = {"OUTPUT0": [p + q for p, q in zip(x, y)], "OUTPUT1": [p - q for p, q in zip(x, y)]}
        shape, dt = [1, 4], "FP32"
for name, w in want.items():
    o = outs.get(name)
    assert o is not None, f"no {name} in {list(outs)}"
    assert o["shape"] == shape and o["datatype"] == dt, f"{name}: {o['shape']} {o['datatype']}"
    got = o["data"] if dt == "BYTES" else [float(v) for v in o["data"]]
    assert got == w, f"{name}: {str(got)[:120]} != {str(w)[:120]}"
PY
}

# --- per-target build and server command ---------------------------------------------------
build() { # TARGET
  case $1 in
    oxiserve) if [ "$BUILD" = 1 ]; then cargo build --release --locked --bin oxiserve; fi
      [ -x target/release/oxiserve ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
cmd() { # TARGET VARIANT: the server command line
  local p=${PORT[$1]}
  local ports="--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))"
  case $1 in
    oxiserve) echo "target/release/oxiserve --model-repository=$WORK/repo-oxiserve/$2 $ports${OXISERVE_ARGS:+ $OXISERVE_ARGS}" ;;
    triton) echo "bash $TRITON_SH --model-repository=$WORK/repo-triton/$2 $ports${TRITON_ARGS:+ $TRITON_ARGS}" ;;
  esac
}
wait_ready() { # TARGET VARIANT: server ready, model ready, right answer
  await_ready "${PORT[$1]}" "$SERVER_PID" "$READY_TIMEOUT" "${MODEL[$2]}" || return 1
  local err
  err=$(check "$2" "${PORT[$1]}" 2>&1) || { echo "wrong answer: $(tail -n 2 <<<"$err" | tr '\n' ' ')"; return 1; }
}

# --- benchmark ----------------------------------------------------------------------------
echo -e "target\tvariant\tconns\trun\trps\tp50_us\tp90_us\tp99_us\terrors\tnon2xx" >"$WORK/runs.tsv"
# perf_args VARIANT: how oxiserve-perf sends the variant's requests
perf_args() {
  case $1 in
    1mib) echo "--input-data zero --input-tensor-format binary --output-tensor-format binary" ;;
    *) echo "--input-data $WORK/$1.data.json --input-tensor-format json --output-tensor-format json" ;;
  esac
}
run_load() { # CONNS PORT DURATION VARIANT
  # shellcheck disable=SC2046
  perf_point "${MODEL[$4]}" "$2" "$1" "$3" $(perf_args "$4")
}
max_conns=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | tail -n 1)
ensure_perf "$BUILD" >"$WORK/perf.build.log" 2>&1 || { tail -n 5 "$WORK/perf.build.log" >&2; exit 1; }
for t in $TARGETS; do
  BUSY[$t]=$(cpu_busy)
  log "$t: prepare (CPUs ${BUSY[$t]} busy with other work)"
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    for v in $VARIANTS; do STATUS[$t/$v]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; done
    log "${STATUS[$t/${VARIANTS%% *}]}"; continue
  fi
  BUILT[$t]=1
done
# Per variant, both servers are up at once and the runs alternate between them (oxiserve
# then triton, then triton then oxiserve, ...), so the slow and fast phases of this shared
# VM fall on both targets alike.
for v in $VARIANTS; do
  up=()
  for t in $TARGETS; do
    [ -n "${BUILT[$t]:-}" ] || continue
    if curl -s -o /dev/null "http://127.0.0.1:${PORT[$t]}/"; then
      STATUS[$t/$v]="not run: port ${PORT[$t]} already in use by another process"; log "${STATUS[$t/$v]}"; continue
    fi
    log "$t/$v: $(cmd "$t" "$v")"
    $(cmd "$t" "$v") >"$WORK/$t.$v.log" 2>&1 &
    SERVER_PID=$!
    PIDS[$t]=$SERVER_PID
    if ! why=$(wait_ready "$t" "$v"); then
      STATUS[$t/$v]="failed ($why); server log: $(server_log_tail "$WORK/$t.$v.log")"
      log "$t/$v: ${STATUS[$t/$v]}"; stop_server; unset "PIDS[$t]"; continue
    fi
    [ -n "${VERSION[$t]:-}" ] || VERSION[$t]=$(curl -s "http://127.0.0.1:${PORT[$t]}/v2" |
      python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
    up+=("$t")
  done
  for t in "${up[@]}"; do
    log "$t/$v: warm-up ($WARMUP at $max_conns connections)"
    run_load "$max_conns" "${PORT[$t]}" "$WARMUP" "$v" >/dev/null || true
    STATUS[$t/$v]=ok
  done
  [ ${#up[@]} -eq 0 ] || IDLE[$v]=$(cpu_busy)
  for c in $CONCURRENCY; do
    for r in $(seq "$RUNS"); do
      order=("${up[@]}")
      if [ $((r % 2)) = 0 ]; then order=(); for t in "${up[@]}"; do order=("$t" "${order[@]}"); done; fi
      for t in "${order[@]}"; do
        out=$(run_load "$c" "${PORT[$t]}" "$DURATION" "$v" | grep '^RESULT ' || true)
        [ -n "$out" ] || { STATUS[$t/$v]="ok, except: oxiserve-perf gave no result at $c connections, run $r"; continue; }
        log "$t/$v c=$c run $r: $out"
        for kv in ${out#RESULT }; do declare "${kv%%=*}=${kv#*=}"; done # rps=.. p50_us=.. ...
        echo -e "$t\t$v\t$c\t$r\t$rps\t$p50_us\t$p90_us\t$p99_us\t$errors\t$non2xx" >>"$WORK/runs.tsv"
      done
    done
  done
  # each server must still answer correctly after the load
  for t in "${up[@]}"; do
    if ! err=$(check "$v" "${PORT[$t]}" 2>&1); then
      STATUS[$t/$v]="${STATUS[$t/$v]}; WRONG ANSWER after the load: $(tail -n 1 <<<"$err")"
    fi
  done
  stop_servers
done

# --- report ---------------------------------------------------------------------------------
median() { # TARGET VARIANT CONNS COLUMN -> median over runs, or empty
  awk -F'\t' -v t="$1" -v v="$2" -v c="$3" -v k="$4" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t && $2 == v && $3 == c { print $col[k] }' "$WORK/runs.tsv" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
total() { awk -F'\t' -v t="$1" -v v="$2" -v c="$3" '$1 == t && $2 == v && $3 == c { n += $9 + $10 } END { print n + 0 }' "$WORK/runs.tsv"; }
goal() { # LABEL VALUE LIMIT LIMIT_TEXT OP(ge|le)
  [ "$2" != "–" ] || { echo "- $1: not measured"; return; }
  awk -v v="$2" -v l="$3" -v lt="$4" -v op="$5" -v label="$1" 'BEGIN { ok = op == "ge" ? v >= l : v <= l
    printf "- %s: %s (goal %s %s) -> **%s**\n", label, v, op == "ge" ? ">=" : "<=", lt, ok ? "met" : "NOT met" }'
}
declare -A RPS=() P50=() P99=()
for t in $ALL_TARGETS; do for v in $ALL_VARIANTS; do for c in $CONCURRENCY; do
  RPS[$t/$v/$c]=$(median "$t" "$v" "$c" rps); P50[$t/$v/$c]=$(median "$t" "$v" "$c" p50_us); P99[$t/$v/$c]=$(median "$t" "$v" "$c" p99_us)
done; done; done
lo=$(tr ' ' '\n' <<<"$CONCURRENCY" | sort -n | head -n 1)
hi=$max_conns
complete=yes
for t in $ALL_TARGETS; do for v in $ALL_VARIANTS; do [[ ${STATUS[$t/$v]:-} == ok* ]] || complete=no; done; done
repo_path() { sed "s|$WORK/repo-oxiserve|\$REPO_OXISERVE|; s|$WORK/repo-triton|\$REPO_TRITON|"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Python backend: Triton's add_sub model.py, oxiserve vs real Triton (KServe v2 over HTTP)"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\", VARIANTS=\"$VARIANTS\"): see *Targets* for what was not measured, and why."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); servers, their Python processes and oxiserve-perf share the CPUs, nothing pinned"
  echo "- Load: oxiserve-perf (crates/perf), $RUNS runs of one $DURATION window per point after a $WARMUP warm-up window at $max_conns connections; C keep-alive connections with one request in flight each; the same request values per variant, encoded once; both servers of a variant up at once, each point's runs alternating between them"
  echo "- At 1 connection, latency depends on whether the scheduler puts the load generator and the server on the same CPU (see bench/README.md): compare runs in *All runs*"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)'), Triton ${VERSION[triton]:-?} (from nvidia-pytriton 0.7.0, Python backend)"
  echo "- Python: Triton's stubs run $(pyver "$HOME/.cache/real-triton/venv/bin/python3") (\`~/.cache/real-triton/venv\`); oxiserve's default interpreter here is \`.venv/bin/python3\` next to the binary's ancestors: $(pyver .venv/bin/python3)${OXISERVE_ARGS:+ (OXISERVE_ARGS may pick another)}"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" VARIANTS=\"$VARIANTS\" RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP BUILD=$BUILD${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/python_add_sub.sh"
  echo "cargo build --release --locked --bin oxiserve$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# servers: both up, fresh ones per variant V (\$REPO_*: temporary model repositories, see below)"
  cmd oxiserve '$V' | repo_path
  cmd triton '$V' | repo_path
  echo "# load: port P = ${PORT[oxiserve]} (oxiserve), ${PORT[triton]} (triton); connections C = $CONCURRENCY; warm-up first: the same at C = $max_conns for $WARMUP; per C, runs alternate between the targets"
  echo "cargo build --release --locked -p oxiserve-perf$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  for v in $VARIANTS; do
    echo "$PERF -m ${MODEL[$v]} -u 127.0.0.1:\$P -i http --concurrency-range \$C $(perf_args "$v" | sed "s|$WORK/|\$WORK/|") -p $(( ${DURATION%s} * 1000 )) -r 1 --json run.json"
  done
  echo '```'
  echo
  echo "Request bodies (written by the script; \$WORK/<variant>.data.json holds a body's values as oxiserve-perf input data; before timing, one request with the same body must return the right OUTPUT0 and OUTPUT1, and again after the load):"
  echo
  for v in $VARIANTS; do echo "- $v (\`${MODEL[$v]}\`): ${DESC[$v]}"; done
  echo
  if [[ " $VARIANTS " == *" fp32 "* ]] || [[ " $VARIANTS " == *" bytes "* ]]; then
    echo '```json'
    for v in fp32 bytes; do [[ " $VARIANTS " == *" $v "* ]] && { cat "$WORK/$v.body"; echo; }; done
    echo '```'
    echo
  fi
  echo "Model \`add_sub\`, the same files in \$REPO_OXISERVE/fp32 and \$REPO_TRITON/fp32 (\`add_sub_bytes\`: TYPE_STRING and \`OUTPUT1 = INPUT1 + INPUT0\`; \`add_sub_1mib\`: dims [ 262144 ]):"
  echo
  echo '```'
  cat "$WORK/repo-triton/fp32/add_sub/config.pbtxt"
  echo '```'
  echo
  echo '```python'
  cat "$WORK/repo-triton/fp32/add_sub/1/model.py"
  echo '```'
  for v in $VARIANTS; do
    echo
    echo "## Results: $v (\`${MODEL[$v]}\`, medians of $RUNS runs)$([ "$v" = fp32 ] || echo ', informational')"
    echo
    echo "| target | connections | req/s | p50 µs | p99 µs | errors + non-2xx (all runs) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    for t in $ALL_TARGETS; do
      if [[ ${STATUS[$t/$v]:-} != ok* ]]; then
        echo "| $t | – | – | – | – | $([ -n "${STATUS[$t/$v]:-}" ] && echo 'failed, see *Targets*' || echo 'not run') |"; continue
      fi
      for c in $CONCURRENCY; do
        echo "| $t | $c | ${RPS[$t/$v/$c]} | ${P50[$t/$v/$c]} | ${P99[$t/$v/$c]} | $(total "$t" "$v" "$c") |"
      done
    done
    echo
    echo "| connections | req/s oxiserve/Triton | p50 oxiserve/Triton | p99 oxiserve/Triton |"
    echo "| ---: | ---: | ---: | ---: |"
    for c in $CONCURRENCY; do
      echo "| $c | $(ratio "${RPS[oxiserve/$v/$c]}" "${RPS[triton/$v/$c]}") | $(ratio "${P50[oxiserve/$v/$c]}" "${P50[triton/$v/$c]}") | $(ratio "${P99[oxiserve/$v/$c]}" "${P99[triton/$v/$c]}") |"
    done
  done
  echo
  echo "## Goals (issue 6, fp32 \`add_sub\`)"
  echo
  goal "req/s at $hi connections, oxiserve/Triton" "$(ratio "${RPS[oxiserve/fp32/$hi]}" "${RPS[triton/fp32/$hi]}")" 3 3 ge
  goal "p50 at $lo connection, oxiserve/Triton" "$(ratio "${P50[oxiserve/fp32/$lo]}" "${P50[triton/fp32/$lo]}")" 0.33333 "1/3" le
  echo
  echo "Start-up time and memory: \`bench/python_startup.sh\` (\`bench/results/python_startup.md\`)."
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do
    for v in $ALL_VARIANTS; do
      echo "- $t, $v: ${STATUS[$t/$v]:-not run (not in TARGETS/VARIANTS)}"
    done
    [ -z "${BUSY[$t]:-}" ] || echo "  (before $t: other processes kept the CPUs ${BUSY[$t]} busy over 2 s)"
  done
  for v in $ALL_VARIANTS; do
    [ -z "${IDLE[$v]:-}" ] || echo "- $v: with its servers up and idle, the CPUs were ${IDLE[$v]} busy over 2 s"
  done
  echo
  echo "## All runs"
  echo
  echo "| target | variant | connections | run | req/s | p50 µs | p90 µs | p99 µs | errors | non-2xx |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
