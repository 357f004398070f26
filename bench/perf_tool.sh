#!/usr/bin/env bash
# What the load generator itself costs: oxiserve-perf (and, when it runs here,
# Triton's perf_analyzer 2.51 from the tritonclient wheel in .venv) drive
# target/release/oxiserve's identity model (FP32 [16], batch 1) over HTTP
# (binary tensors) and gRPC at each concurrency. For every run: requests
# counted by the server (statistics delta), the tool's CPU seconds and peak
# RSS (getrusage of the child), the throughput the tool reports (its -f CSV,
# perf_analyzer's format for both), and requests per tool CPU second: how
# many requests/s one core of the tool can drive.
#
#   CONCURRENCY="1 8 64" PROTOCOLS="http grpc" TOOLS="oxiserve-perf perf_analyzer" bench/perf_tool.sh
#
# perf_analyzer needs libb64 (apt: libb64-0d) and libcudart.so.12 (pip:
# nvidia-cuda-runtime-cu12, into ~/.cache/oxiserve-bench/cudart); both are
# installed when missing; if that fails it is reported, not fatal.
# Ports: 18480 (HTTP), 18481 (gRPC), 18482 (metrics).
set -euo pipefail
cd "$(dirname "$0")/.."

CONCURRENCY=${CONCURRENCY:-1 8 64}
PROTOCOLS=${PROTOCOLS:-http grpc}
TOOLS=${TOOLS:-oxiserve-perf perf_analyzer}
INTERVAL_MS=${INTERVAL_MS:-3000}
TRIALS=${TRIALS:-5}
RESULTS=${RESULTS:-bench/results/perf_tool.md}
PORT=18480
PA=.venv/bin/perf_analyzer
CUDART=$HOME/.cache/oxiserve-bench/cudart

. bench/lib/common.sh
WORK=$(mktemp -d -t perf-tool-bench.XXXXXX)
SERVER_PID=
cleanup() {
  [ -z "$SERVER_PID" ] || { kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT
log() { echo "[bench] $*" >&2; }

# Built one at a time: together, cargo would unify hyper's features and rebuild the server.
cargo build --release --locked --bin oxiserve >&2
cargo build --release --locked -p oxiserve-perf >&2
make_identity_repos "$WORK"

# perf_analyzer: its shared libraries, if it can be made to run at all.
PA_STATUS=ok
if [[ " $TOOLS " == *" perf_analyzer "* ]]; then
  if [ ! -x "$PA" ]; then
    PA_STATUS="not installed ($PA missing)"
  else
    ldconfig -p | grep -q libb64.so.0d || DEBIAN_FRONTEND=noninteractive apt-get install -y -q libb64-0d >/dev/null 2>&1 || true
    [ -e "$CUDART/nvidia/cuda_runtime/lib/libcudart.so.12" ] ||
      .venv/bin/pip install -q --target "$CUDART" nvidia-cuda-runtime-cu12 >/dev/null 2>&1 || true
    export LD_LIBRARY_PATH="$CUDART/nvidia/cuda_runtime/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$PA" --version >/dev/null 2>&1 || PA_STATUS="does not start: $("$PA" --version 2>&1 | head -n 1)"
  fi
  log "perf_analyzer: $PA_STATUS"
fi

SERVER_CMD="target/release/oxiserve --model-repository=$WORK/repo-oxiserve --http-port=$PORT --grpc-port=$((PORT + 1)) --metrics-port=$((PORT + 2))"
BUSY=$(cpu_busy)
$SERVER_CMD >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
why=$(await_ready "$PORT" "$SERVER_PID" 60 identity) || { log "server: $why"; exit 1; }

# measure.py PORT CSV -- CMD...: runs CMD; prints requests, wall s, CPU s, max RSS KiB, infer/s.
cat >"$WORK/measure.py" <<'PY'
import csv, json, os, subprocess, sys, time, urllib.request

port, csv_path, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]

def served():
    url = f"http://127.0.0.1:{port}/v2/models/identity/stats"
    s = json.load(urllib.request.urlopen(url))["model_stats"][0]["inference_stats"]
    return int(s["success"]["count"]) + int(s["fail"]["count"])

before, start = served(), time.monotonic()
tool = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
stderr = tool.stderr.read()
_, code, usage = os.wait4(tool.pid, 0)  # this child's own CPU time and peak RSS
wall = time.monotonic() - start
time.sleep(0.2)  # the server may count the last requests just after answering them
cpu = usage.ru_utime + usage.ru_stime
try:
    rows = list(csv.reader(open(csv_path)))
    rate = float(rows[1][1])
except (OSError, IndexError, ValueError):
    rate = float("nan")
code = os.waitstatus_to_exitcode(code)
status = "ok" if code == 0 else f"exit {code}: {' '.join(stderr.strip().splitlines()[-1:])}"
print(f"{served() - before}\t{wall:.2f}\t{cpu:.2f}\t{usage.ru_maxrss}\t{rate:.0f}\t{status}")
PY

tool_cmd() { # TOOL PROTOCOL CONCURRENCY CSV
  local url=127.0.0.1:$PORT
  [ "$2" = grpc ] && url=127.0.0.1:$((PORT + 1))
  case $1 in
    oxiserve-perf) echo "target/release/oxiserve-perf -m identity -u $url -i $2 --concurrency-range $3 -p $INTERVAL_MS -r $TRIALS -f $4" ;;
    perf_analyzer) echo "$PA -m identity -u $url -i $2 --concurrency-range $3 -p $INTERVAL_MS -r $TRIALS -f $4" ;;
  esac
}

echo -e "tool\tprotocol\tconcurrency\trequests\twall_s\tcpu_s\tmaxrss_kib\tinfer_per_s\tstatus" >"$WORK/runs.tsv"
for tool in $TOOLS; do
  [ "$tool" != perf_analyzer ] || [ "$PA_STATUS" = ok ] || continue
  for proto in $PROTOCOLS; do
    for c in $CONCURRENCY; do
      cmd=$(tool_cmd "$tool" "$proto" "$c" "$WORK/out.csv")
      rm -f "$WORK/out.csv"
      line=$(python3 "$WORK/measure.py" "$PORT" "$WORK/out.csv" -- $cmd)
      log "$tool $proto c=$c: $line"
      echo -e "$tool\t$proto\t$c\t$line" >>"$WORK/runs.tsv"
    done
  done
done

{
  echo "# Load generator cost: oxiserve-perf vs perf_analyzer"
  echo
  echo "Generated by \`bench/perf_tool.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs"
  echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), ${BUSY} of them busy with other work before the run."
  echo "Server: \`${SERVER_CMD//$WORK/\$WORK}\` (identity model, FP32 [16], max_batch_size 8; requests of batch 1)."
  echo "Each tool: \`-m identity -u URL -i PROTOCOL --concurrency-range C -p $INTERVAL_MS -r $TRIALS -f out.csv\`"
  echo "(oxiserve-perf: \`target/release/oxiserve-perf\`; perf_analyzer: \`$PA\`, 2.51: $PA_STATUS)."
  echo "The tool and the server share the machine, so requests/s is what the server could take;"
  echo "**requests per tool CPU second** is what one core of the tool can drive."
  echo "Requests are counted by the server (statistics delta over the tool's whole run, warm-up"
  echo "and unstable windows included); CPU time and peak RSS are the tool process's own (wait4)."
  echo "perf_analyzer exits 2 when a level does not become stable within -r windows; its"
  echo "requests still count here. oxiserve-perf reports such a level marked unstable."
  echo
  echo "| tool | protocol | concurrency | infer/s (tool's report) | requests (server count) | wall s | tool CPU s | requests per tool CPU s | tool peak RSS MiB | status |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
  tail -n +2 "$WORK/runs.tsv" | while IFS=$'\t' read -r tool proto c req wall cpu rss rate status; do
    per_cpu=$(awk -v r="$req" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", r / c; else print "–" }')
    echo "| $tool | $proto | $c | $rate | $req | $wall | $cpu | $per_cpu | $((rss / 1024)) | $status |"
  done
} >"$RESULTS"
log "wrote $RESULTS"
cat "$RESULTS"
