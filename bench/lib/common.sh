# Sourced by the benchmarks.
#
# cpu_busy: the share of all CPUs other processes keep busy over 2 s.
# make_identity_repos DIR writes the benchmark
# model `identity` (INPUT0 -> OUTPUT0, TYPE_FP32 dims [16], max_batch_size 8)
# twice: DIR/repo-oxiserve with `backend: "identity"`, and DIR/repo-triton
# with `backend: "python"` and a model.py returning INPUT0 through pb_utils
# (real Triton here has only the Python backend).
# server_log_tail LOG: a server log's first and last two error lines (Triton's and
# oxiserve's `E` lines), else its last lines, on one line, for a results file.
# make_add_sub_model DIR NAME [CONFIG...]: DIR/NAME, Triton's python_backend add_sub example
# (FP32 dims [4], max_batch_size 8, 1 CPU instance, model.py as in python_add_sub.sh), each
# further argument one more config.pbtxt line (e.g. "dynamic_batching { }").
# model_counts PORT MODEL: "inference_count execution_count" from GET /v2/models/MODEL/stats
# (summed over versions), or nothing.
# add_sub_body FILE: the JSON FP32 [1,4] add_sub request body of python_add_sub.sh.
# check_answer PORT MODEL BODY KIND: one request; KIND identity (OUTPUT0 = INPUT0) or add_sub.
#   KIND add_sub2: add_sub applied twice (OUTPUT0 = 2*INPUT0, OUTPUT1 = 2*INPUT1).

_identity_repo() { # DIR BACKEND
  mkdir -p "$1/identity/1"
  cat >"$1/identity/config.pbtxt" <<CFG
name: "identity"
backend: "$2"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
CFG
}

make_identity_repos() { # DIR
  _identity_repo "$1/repo-oxiserve" identity
  _identity_repo "$1/repo-triton" python
  cat >"$1/repo-triton/identity/1/model.py" <<'PY'
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
PY
}

cpu_busy() {
  { head -n 1 /proc/stat; sleep 2; head -n 1 /proc/stat; } | awk '{ t = 0; for (i = 2; i <= NF; i++) t += $i }
    NR == 1 { t0 = t; i0 = $5 + $6 } NR == 2 { printf "%.0f%%", 100 * (1 - ($5 + $6 - i0) / (t - t0)) }'
}

server_log_tail() { # LOG
  local e; e=$({ grep -E '^E[0-9]{4} ' "$1" | head -n 1; grep -E '^E[0-9]{4} ' "$1" | tail -n 2; } | awk '!seen[$0]++')
  [ -n "$e" ] || e=$(grep -v '^[|+]' "$1" | grep -v '^ *$' | tail -n 4)
  cut -c1-300 <<<"$e" | tr '\n' ' '
}

ratio() { # A B: A/B with two decimals, or – when either is missing
  [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "–"
}

pyver() { # PYTHON: "Python X.Y.Z, numpy N" of an interpreter, or ?
  [ -x "$1" ] && "$1" -c 'import sys; v = sys.version.split()[0]
try:
    import numpy; n = numpy.__version__
except Exception: n = "none"
print(f"Python {v}, numpy {n}")' 2>/dev/null || echo "?"
}

make_add_sub_model() { # DIR NAME [CONFIG_LINE...]
  local dir=$1/$2 name=$2; shift 2
  mkdir -p "$dir/1"
  {
    cat <<CFG
name: "$name"
backend: "python"
max_batch_size: 8
input [
  { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] },
  { name: "INPUT1", data_type: TYPE_FP32, dims: [ 4 ] }
]
output [
  { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] },
  { name: "OUTPUT1", data_type: TYPE_FP32, dims: [ 4 ] }
]
instance_group [ { count: 1, kind: KIND_CPU } ]
CFG
    local line; for line in "$@"; do echo "$line"; done
  } >"$dir/config.pbtxt"
  add_sub_model_py 'in_0.as_numpy() + in_1.as_numpy()' 'in_0.as_numpy() - in_1.as_numpy()' >"$dir/1/model.py"
}

add_sub_body() { # FILE
  printf '%s' '{"inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32","data":[1.0,2.0,3.0,4.0]},{"name":"INPUT1","shape":[1,4],"datatype":"FP32","data":[0.5,0.25,-1.5,8.0]}]}' >"$1"
}

model_counts() { # PORT MODEL
  curl -s "http://127.0.0.1:$1/v2/models/$2/stats" | python3 -c 'import json, sys
s = json.load(sys.stdin)["model_stats"]
print(sum(int(m.get("inference_count", 0)) for m in s), sum(int(m.get("execution_count", 0)) for m in s))' 2>/dev/null || true
}

check_answer() { # PORT MODEL BODY KIND(identity|add_sub|add_sub2)
  python3 - "$@" <<'PY'
import http.client, json, sys
port, model, body, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
req = json.load(open(body))
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
c.request("POST", f"/v2/models/{model}/infer", json.dumps(req), {"Content-Type": "application/json"})
r = c.getresponse()
data = r.read()
if r.status != 200:
    sys.exit(f"HTTP {r.status}: {data[:300]!r}")
outs = {o["name"]: o for o in json.loads(data)["outputs"]}
x = req["inputs"][0]["data"]
if kind == "identity":
    want = {"OUTPUT0": x}
elif kind == "add_sub2":  # add_sub applied twice: (x + y) + (x - y), (x + y) - (x - y)
    y = req["inputs"][1]["data"]
    want = {"OUTPUT0": [2 * p for p in x], "OUTPUT1": [2 * q for q in y]}
else:
    y = req["inputs"][1]["data"]
    want = {"OUTPUT0": [p + q for p, q in zip(x, y)], "OUTPUT1": [p - q for p, q in zip(x, y)]}
for name, w in want.items():
    o = outs.get(name)
    assert o is not None, f"no {name} in {list(outs)}"
    assert o["shape"] == req["inputs"][0]["shape"] and o["datatype"] == "FP32", f"{name}: {o['shape']} {o['datatype']}"
    got = [float(v) for v in o["data"]]
    assert got == w, f"{name}: {got} != {w}"
PY
}

# add_sub_model_py OUT0 OUT1: Triton python_backend examples/add_sub/model.py (comments
# dropped), with the Python expressions computing OUTPUT0 and OUTPUT1 from in_0 and in_1.
add_sub_model_py() {
  cat <<PY
import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = model_config = json.loads(args["model_config"])
        output0_config = pb_utils.get_output_config_by_name(model_config, "OUTPUT0")
        output1_config = pb_utils.get_output_config_by_name(model_config, "OUTPUT1")
        self.output0_dtype = pb_utils.triton_string_to_numpy(output0_config["data_type"])
        self.output1_dtype = pb_utils.triton_string_to_numpy(output1_config["data_type"])

    def execute(self, requests):
        output0_dtype = self.output0_dtype
        output1_dtype = self.output1_dtype
        responses = []
        for request in requests:
            in_0 = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            in_1 = pb_utils.get_input_tensor_by_name(request, "INPUT1")
            out_0, out_1 = ($1, $2)
            out_tensor_0 = pb_utils.Tensor("OUTPUT0", out_0.astype(output0_dtype))
            out_tensor_1 = pb_utils.Tensor("OUTPUT1", out_1.astype(output1_dtype))
            inference_response = pb_utils.InferenceResponse(
                output_tensors=[out_tensor_0, out_tensor_1]
            )
            responses.append(inference_response)
        return responses

    def finalize(self):
        print("Cleaning up...")
PY
}

# The server a script started: SERVER_PID; stop_server ends it (SIGTERM, SIGKILL after
# 30 s). Scripts that define their own stop_server or log before sourcing this keep them.
SERVER_PID=${SERVER_PID:-}
declare -F stop_server >/dev/null || stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

declare -F log >/dev/null || log() { echo "[bench] $*" >&2; }

await_ready() { # PORT PID TIMEOUT_S MODEL...: GET /v2/health/ready = 200 (polled every 0.2 s),
  # then every MODEL ready; prints why not and fails
  local base="http://127.0.0.1:$1" pid=$2 timeout=$3 deadline=$((SECONDS + $3)) m
  shift 3
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/health/ready" || true)" = 200 ]; do
    kill -0 "$pid" 2>/dev/null || { echo "exited before ready"; return 1; }
    [ $SECONDS -lt $deadline ] || { echo "not ready after ${timeout}s"; return 1; }
    sleep 0.2
  done
  for m in "$@"; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v2/models/$m/ready" || true)" = 200 ] ||
      { echo "server ready but model $m not ready"; return 1; }
  done
}

# oxiserve-perf (crates/perf), the benchmarks' load generator.
PERF=${PERF:-target/release/oxiserve-perf}
model_dims() { # MODEL: DIMS_IN and DIMS_OUT (config.pbtxt dims, batch left out) of the throughput
  # benchmarks' models, bench/onnx/make_models.py's mlp and encoder (and their TensorFlow twins)
  case $1 in
    mlp) DIMS_IN="1024" DIMS_OUT="256" ;;
    encoder) DIMS_IN="64, 256" DIMS_OUT="64, 256" ;;
    *) echo "MODEL must be mlp or encoder" >&2; exit 2 ;;
  esac
}
ensure_perf() { # BUILD(1|0): cargo build the release tool first when 1
  if [ "$1" = 1 ]; then cargo build --release --locked -p oxiserve-perf; fi
  [ -x "$PERF" ]
}
perf_data() { # BODY OUT [HEADER_LEN]: perf_analyzer's input data file holding the values of
  # a KServe v2 JSON body (one entry), of JSON Lines of such bodies (one entry per line, sent in
  # turn), or, with HEADER_LEN, of a binary tensor extension body (that many bytes of JSON
  # header, then each FP32 input's raw little-endian bytes)
  python3 - "$@" <<'PY'
import array, json, sys
path, out = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    raw, pos, entry = open(path, "rb").read(), int(sys.argv[3]), {}
    for i in json.loads(raw[:pos])["inputs"]:
        assert i["datatype"] == "FP32", f"{i['name']}: {i['datatype']}"
        size = i["parameters"]["binary_data_size"]
        a = array.array("f")
        a.frombytes(raw[pos:pos + size])
        entry[i["name"]], pos = a.tolist(), pos + size
    entries = [entry]
else:
    text = open(path, encoding="utf-8").read()
    try:
        bodies = [json.loads(text)]
    except ValueError:
        bodies = [json.loads(line) for line in text.splitlines() if line.strip()]
    entries = [{i["name"]: i["data"] for i in b["inputs"]} for b in bodies]
json.dump({"data": entries}, open(out, "w"))
PY
}
rows_per_request() { # N: how a throughput benchmark's requests carry rows, in words
  if [ "$1" = 1 ]; then echo "one row per request"; else echo "$1 rows per request (oxiserve-perf -b $1)"; fi
}
rows_per_s() { # RPS N: the rows/s of RPS requests/s carrying N rows each ("–" stays "–")
  if [ "$1" = – ]; then echo –; else awk -v r="$1" -v b="$2" 'BEGIN { printf "%.1f", r * b }'; fi
}
perf_point() { # MODEL PORT CONNS DURATION [TOOL ARGS...]: one oxiserve-perf window of DURATION
  # (seconds, "5s" or "5") at CONNS connections, one request in flight each; prints one line
  # "RESULT requests=.. duration_s=.. rps=.. p50_us=.. p90_us=.. p99_us=.. errors=.. non2xx=0
  # tool_cpu_s=..", nothing if the tool gave no result. rps and the latencies are the window's;
  # requests (every request the tool sent), duration_s (its wall time) and tool_cpu_s (its user +
  # system CPU time, /proc/self/stat) span the whole tool process, start-up and the requests
  # before and after the window included, the span a caller measures the server over.
  # PERF_PROTOCOL (http) picks the protocol: grpc sends ModelInfer to PORT.
  local model=$1 port=$2 conns=$3 duration=${4%s} out
  shift 4
  out=$(mktemp)
  "$PERF" -m "$model" -u "127.0.0.1:$port" -i "${PERF_PROTOCOL:-http}" --concurrency-range "$conns" "$@" \
    -p $((duration * 1000)) -r 1 --json "$out" >/dev/null 2>&1 || true
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); t = r["totals"]; p = r["points"][0]; l = p["latency_us"]
print("RESULT requests=%d duration_s=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d errors=%d non2xx=0 tool_cpu_s=%.2f" % (
    t["requests_sent"], t["wall_seconds"], p["requests_per_second"], l["p50"], l["p90"], l["p99"], p["errors"],
    t["tool_cpu_seconds"]))' "$out" 2>/dev/null || true
  rm -f "$out"
}

# --- report helpers over a runs table (TSV, a header line naming the columns) ---------------
# runs_median TSV COLUMN [NAME=VALUE...]: the median of COLUMN over the rows whose columns NAME
# hold VALUE, rounded to a whole number; nothing when no row matches.
runs_median() { runs_median_format %.0f "$@"; }
# runs_median_format FORMAT TSV COLUMN [NAME=VALUE...]: the same median, printed with FORMAT
# (printf's, e.g. %.1f).
runs_median_format() {
  local fmt=$1 tsv=$2 col=$3; shift 3
  awk -F'\t' -v k="$col" -v where="$*" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; n = split(where, w, " "); next }
    { for (i = 1; i <= n; i++) { split(w[i], kv, "="); if ($c[kv[1]] != kv[2]) next } print $c[k] }' "$tsv" | sort -g |
    awk -v fmt="$fmt" '{ a[NR] = $1 } END { if (NR) printf fmt, NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# runs_failures TSV [NAME=VALUE...]: errors + non2xx summed over the matching rows.
runs_failures() {
  local tsv=$1; shift
  awk -F'\t' -v where="$*" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; n = split(where, w, " "); next }
    { for (i = 1; i <= n; i++) { split(w[i], kv, "="); if ($c[kv[1]] != kv[2]) next } s += $c["errors"] + $c["non2xx"] }
    END { print s + 0 }' "$tsv"
}
# runs_rows TSV: the rows after the header as Markdown table rows.
runs_rows() { tail -n +2 "$1" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'; }
# goal_line LABEL VALUE LIMIT LIMIT_TEXT OP(ge|le): "- LABEL: VALUE (goal >= LIMIT_TEXT) -> **met**"
# or **NOT met**; "not measured" when VALUE is – (ratio's missing mark).
goal_line() {
  [ "$2" != "–" ] || { echo "- $1: not measured"; return; }
  awk -v v="$2" -v l="$3" -v lt="$4" -v op="$5" -v label="$1" 'BEGIN { ok = op == "ge" ? v >= l : v <= l
    printf "- %s: %s (goal %s %s) -> **%s**\n", label, v, op == "ge" ? ">=" : "<=", lt, ok ? "met" : "NOT met" }'
}
# machine_line: "N CPUs (model), M GiB, Linux release" for a results file.
machine_line() {
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)"
}
# tree_version: the checkout's short commit, with "(uncommitted changes)" when the tree differs.
# (a script calls it before it writes its results file, which may be tracked)
tree_version() { echo "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')"; }
# server_version PORT: the "version" of GET /v2, or nothing.
server_version() {
  curl -s "http://127.0.0.1:$1/v2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true
}
# run_order RUN ITEM...: the items in order for odd runs, reversed for even ones, so that runs
# alternate which item goes first.
run_order() {
  local r=$1 items=() i; shift
  if [ $((r % 2)) = 1 ]; then items=("$@"); else for i in "$@"; do items=("$i" "${items[@]}"); done; fi
  echo "${items[@]}"
}
# result_fields LINE FIELD...: the FIELDs' values of a perf_point "RESULT k=v ..." line, tab-separated.
result_fields() {
  local line=$1 f kv values=(); shift
  for f in "$@"; do for kv in ${line#RESULT }; do [ "${kv%%=*}" != "$f" ] || values+=("${kv#*=}"); done; done
  (IFS=$'\t'; echo "${values[*]}")
}

# --- servers by target ------------------------------------------------------------------------
# server_cmd TARGET PORT REPO [ARGS]: the command line serving REPO with HTTP on PORT, gRPC on
# PORT+1 and metrics on PORT+2: TARGET oxiserve runs $OXISERVE_BIN (target/release/oxiserve),
# triton real Triton ($TRITON_SH, /work/shared/tools/real-triton.sh); ARGS appended.
server_cmd() {
  local ports="--http-port=$2 --grpc-port=$(($2 + 1)) --metrics-port=$(($2 + 2))" bin
  case $1 in
    oxiserve) bin=${OXISERVE_BIN:-target/release/oxiserve} ;;
    triton) bin="bash ${TRITON_SH:-/work/shared/tools/real-triton.sh}" ;;
  esac
  echo "$bin --model-repository=$3 $ports${4:+ $4}"
}
# stop_servers: stop_server for every pid of the caller's associative array PIDS (target -> pid).
stop_servers() {
  local t
  for t in "${!PIDS[@]}"; do SERVER_PID=${PIDS[$t]}; stop_server; done
  PIDS=()
}
