#!/usr/bin/env bash
# Python backend start-up time and memory: a repository of MODELS (24) small Python models
# (distinct names, a tiny model.py each, 1 CPU instance each), served by
#   oxiserve - target/release/oxiserve (its Python backend)
#   triton   - real Triton (/work/shared/tools/real-triton.sh)
# one server at a time, RUNS (5) starts each, alternating targets so that other load on the
# machine hits both alike. Each start measures:
#   - ready: process start -> first 200 from GET /v2/health/ready (polled every 20 ms);
#     then one inference per model must give the right answer (not timed);
#   - memory, SETTLE seconds later: the sum of PSS (/proc/PID/smaps_rollup) over the server
#     and all its descendants (found through the parent pids in /proc/*/stat), and their RSS;
#   - shared memory: entries that appeared in /dev/shm during the run (machine-wide, so other
#     work on the machine can add to it), /dev/shm files and memfds the process tree maps,
#     and the new /dev/shm entries still there after the server exited (leaks);
#   - shutdown: SIGTERM -> the whole process tree gone.
# Results: medians, ratios oxiserve/Triton and the issue 6 goals (ready <= 1/5 of Triton's,
# memory <= 1/3 of Triton's) in bench/results/python_startup.md.
#
#   bench/python_startup.sh
#   TARGETS=triton RUNS=2 bench/python_startup.sh       # one side, quick
#
# Settings (environment): TARGETS (oxiserve triton), RUNS (5), MODELS (24), SETTLE (2 s),
# READY_TIMEOUT (120 s), STOP_TIMEOUT (30 s), BUILD (1: cargo build the release oxiserve and,
# beside it, the PyTorch backend's library first; 0: use target/release as it is; the results
# say whether the library was there and whether any process mapped libtorch), OXISERVE_ARGS,
# TRITON_ARGS (extra server flags), RESULTS (bench/results/python_startup.md). A target that
# fails to build, start or serve a model is reported in the results (with its log's errors) and
# not started again.
# Ports: 18370-18372 (oxiserve), 18380-18382 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
RUNS=${RUNS:-5}
MODELS=${MODELS:-24}
SETTLE=${SETTLE:-2}
READY_TIMEOUT=${READY_TIMEOUT:-120}
STOP_TIMEOUT=${STOP_TIMEOUT:-30}
BUILD=${BUILD:-1}
OXISERVE_ARGS=${OXISERVE_ARGS:-}
TRITON_ARGS=${TRITON_ARGS:-}
RESULTS=${RESULTS:-bench/results/python_startup.md}
TRITON_SH=/work/shared/tools/real-triton.sh
ALL_TARGETS="oxiserve triton"
declare -A PORT=([oxiserve]=18370 [triton]=18380)
declare -A STATUS=() VERSION=() BUSY=()
for t in $TARGETS; do [ -n "${PORT[$t]:-}" ] || { echo "unknown target '$t'" >&2; exit 2; }; done

WORK=$(mktemp -d -t python-startup-bench.XXXXXX)
SERVER_PID=
stop_server() { # -> SHUTDOWN_MS, ORPHANS (descendants still alive 10 s after the server exited)
  SHUTDOWN_MS=; ORPHANS=
  [ -n "$SERVER_PID" ] || return 0
  local t0 pids p alive killed=
  pids=$(tree_pids "$SERVER_PID")
  t0=$(date +%s%N)
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  for _ in $(seq $((STOP_TIMEOUT * 50))); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.02; done
  kill -0 "$SERVER_PID" 2>/dev/null && { kill -KILL "$SERVER_PID" 2>/dev/null || true; killed=" (SIGKILL after ${STOP_TIMEOUT}s)"; }
  wait "$SERVER_PID" 2>/dev/null || true
  for _ in $(seq 500); do
    alive=
    for p in $pids; do [ -d "/proc/$p" ] && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] && alive+=" $p"; done
    [ -n "$alive" ] || break
    sleep 0.02
  done
  SHUTDOWN_MS="$(( ($(date +%s%N) - t0) / 1000000 ))$killed"
  if [ -n "$alive" ]; then # processes this run started that outlived their server: end them
    ORPHANS=$(for p in $alive; do echo -n "$p:$(cat "/proc/$p/comm" 2>/dev/null) "; done)
    for p in $alive; do kill -KILL "$p" 2>/dev/null || true; done
  fi
  SERVER_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT

. bench/lib/common.sh

# tree_pids PID: PID and all its descendants
tree_pids() {
  python3 - "$1" <<'PY'
import os, sys
kids = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            s = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        kids.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
todo, seen = [int(sys.argv[1])], []
while todo:
    p = todo.pop()
    seen.append(p)
    todo.extend(kids.get(p, []))
print(" ".join(map(str, seen)))
PY
}

# tree_mem PID OUT_PREFIX: prints "pss_kb server_pss_kb procs rss_kb shm_mapped memfd_mapped";
# writes OUT_PREFIX.procs (per command name: processes, PSS), OUT_PREFIX.shm (mapped names) and
# OUT_PREFIX.libtorch (how many of the processes map libtorch)
tree_mem() {
  python3 - "$(tree_pids "$1")" "$1" "$2" <<'PY'
import collections, sys
pids, root, out = [int(p) for p in sys.argv[1].split()], int(sys.argv[2]), sys.argv[3]
pss = rss = root_pss = procs = 0
by_comm = collections.defaultdict(lambda: [0, 0])
shm, memfd = set(), set()
libtorch = 0
for p in pids:
    try:
        roll = open(f"/proc/{p}/smaps_rollup").read()
        argv = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace").split("\0")
        maps = open(f"/proc/{p}/maps").read()
    except OSError:
        continue
    kv = {}
    for line in roll.splitlines()[1:]:
        f = line.split()
        if len(f) == 3 and f[2] == "kB":
            kv[f[0].rstrip(":")] = int(f[1])
    if "Pss" not in kv:  # a zombie or a kernel thread
        continue
    procs += 1
    pss += kv["Pss"]
    rss += kv["Rss"]
    # the program's name; for an interpreter, also its script or module
    comm = argv[0].rsplit("/", 1)[-1]
    if comm.startswith("python"):
        rest = [a for a in argv[1:] if a and not a.startswith("-")]
        if rest:
            comm += " " + rest[0].rsplit("/", 1)[-1]
    if p == root:
        root_pss = kv["Pss"]
    by_comm[comm][0] += 1
    by_comm[comm][1] += kv["Pss"]
    libtorch += "/libtorch" in maps
    for line in maps.splitlines():
        f = line.split(None, 5)
        if len(f) == 6:
            if f[5].startswith("/dev/shm/"):
                shm.add(f[5].removesuffix(" (deleted)"))
            elif f[5].startswith("/memfd:"):
                memfd.add(f[4])  # inode: one memfd mapped by several processes counts once
with open(out + ".procs", "w") as f:
    for comm, (n, k) in sorted(by_comm.items(), key=lambda x: -x[1][1]):
        f.write(f"{comm}\t{n}\t{k}\n")
with open(out + ".shm", "w") as f:
    f.write("".join(s + "\n" for s in sorted(shm)))
with open(out + ".libtorch", "w") as f:
    f.write(f"{libtorch}\n")
print(pss, root_pss, procs, rss, len(shm), len(memfd))
PY
}

# --- the repository: MODELS tiny models, the same files for both targets ---------------------
# tiny_NN: OUTPUT0 = INPUT0 + NN (FP32 [4], max_batch_size 8, 1 CPU instance)
make_repo() { # DIR
  local i name
  for i in $(seq 0 $((MODELS - 1))); do
    name=$(printf 'tiny_%02d' "$i")
    mkdir -p "$1/$name/1"
    cat >"$1/$name/config.pbtxt" <<CFG
name: "$name"
backend: "python"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 4 ] } ]
instance_group [ { count: 1, kind: KIND_CPU } ]
CFG
    cat >"$1/$name/1/model.py" <<PY
import triton_python_backend_utils as pb_utils

K = $i


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy() + K)])
            for r in requests
        ]
PY
  done
}
make_repo "$WORK/repo-oxiserve"
make_repo "$WORK/repo-triton"

# check_models PORT: every model answers [1,2,3,4] + NN
check_models() {
  python3 - "$1" "$MODELS" <<'PY'
import http.client, json, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
x = [1.0, 2.0, 3.0, 4.0]
body = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": x}]})
for i in range(n):
    c.request("POST", f"/v2/models/tiny_{i:02d}/infer", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"tiny_{i:02d}: HTTP {r.status}: {data[:200]!r}")
    out = json.loads(data)["outputs"][0]
    if [float(v) for v in out["data"]] != [v + i for v in x]:
        sys.exit(f"tiny_{i:02d}: wrong answer {out}")
PY
}

# --- targets ---------------------------------------------------------------------------------
build() { # TARGET
  case $1 in
    oxiserve) if [ "$BUILD" = 1 ]; then cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch; fi
      [ -x target/release/oxiserve ] ;;
    triton) [ -f "$TRITON_SH" ] ;;
  esac
}
cmd() { # TARGET
  local p=${PORT[$1]}
  local ports="--http-port=$p --grpc-port=$((p + 1)) --metrics-port=$((p + 2))"
  case $1 in
    oxiserve) echo "target/release/oxiserve --model-repository=$WORK/repo-oxiserve $ports${OXISERVE_ARGS:+ $OXISERVE_ARGS}" ;;
    triton) echo "bash $TRITON_SH --model-repository=$WORK/repo-triton $ports${TRITON_ARGS:+ $TRITON_ARGS}" ;;
  esac
}
# Triton's first start installs it: do that outside the timing.
if [[ " $TARGETS " == *" triton "* ]] && [ -f "$TRITON_SH" ] && [ ! -x "$HOME/.cache/real-triton/server/tritonserver" ]; then
  log "installing real Triton (first use)"
  bash "$TRITON_SH" --help >/dev/null 2>&1 || true
fi
for t in $TARGETS; do
  if ! build "$t" >"$WORK/$t.build.log" 2>&1; then
    STATUS[$t]="build failed: $(tail -n 3 "$WORK/$t.build.log" | tr '\n' ' ')"; log "${STATUS[$t]}"
  fi
done

# one_run TARGET RUN: start, time readiness, check, measure, stop; appends to runs.tsv.
# Fails with the reason in WHY.
WHY=
one_run() {
  local t=$1 r=$2 base="http://127.0.0.1:${PORT[$1]}" t0 t1 code why= mem
  if curl -s -o /dev/null "$base/"; then WHY="port ${PORT[$t]} already in use by another process"; return 1; fi
  ls -1 /dev/shm | sort >"$WORK/shm.before"
  t0=$(date +%s%N)
  $(cmd "$t") >"$WORK/$t.$r.log" 2>&1 &
  SERVER_PID=$!
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/v2/health/ready" || true)
    [ "$code" = 200 ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { why="exited before ready"; break; }
    [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt "$READY_TIMEOUT" ] || { why="not ready after ${READY_TIMEOUT}s"; break; }
    sleep 0.02
  done
  t1=$(date +%s%N)
  if [ -z "$why" ]; then
    why=$(check_models "${PORT[$t]}" 2>&1) && why= || why="ready, but: $(tail -n 1 <<<"$why")"
  fi
  if [ -n "$why" ]; then
    stop_server
    WHY="$why; server log: $(server_log_tail "$WORK/$t.$r.log")"; return 1
  fi
  [ -n "${VERSION[$t]:-}" ] || VERSION[$t]=$(curl -s "$base/v2" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("version",""))' 2>/dev/null || true)
  sleep "$SETTLE"
  mem=$(tree_mem "$SERVER_PID" "$WORK/$t.$r")
  ls -1 /dev/shm | sort >"$WORK/shm.running"
  comm -13 "$WORK/shm.before" "$WORK/shm.running" >"$WORK/shm.new"
  stop_server
  ls -1 /dev/shm | sort >"$WORK/shm.after"
  local new left
  new=$(wc -l <"$WORK/shm.new")
  left=$(comm -12 "$WORK/shm.new" "$WORK/shm.after" | wc -l)
  # target run ready_ms pss_kb server_pss_kb procs rss_kb shm_mapped memfd_mapped shm_new shm_left shutdown_ms orphans
  set -- $mem
  echo -e "$t\t$r\t$(( (t1 - t0) / 1000000 ))\t$1\t$2\t$3\t$4\t$5\t$6\t$new\t$left\t$SHUTDOWN_MS\t${ORPHANS:-none}" >>"$WORK/runs.tsv"
  log "$t run $r: $(tail -n 1 "$WORK/runs.tsv" | cut -f3-)"
}

echo -e "target\trun\tready_ms\tpss_kb\tserver_pss_kb\tprocs\trss_kb\tshm_mapped\tmemfd_mapped\tshm_new\tshm_left\tshutdown_ms\torphans" >"$WORK/runs.tsv"
for t in $TARGETS; do BUSY[$t]=$(cpu_busy); done
for r in $(seq "$RUNS"); do
  for t in $TARGETS; do
    [ -z "${STATUS[$t]:-}" ] || continue # failed once: not started again
    log "$t run $r: $(cmd "$t")"
    if ! one_run "$t" "$r"; then
      STATUS[$t]="failed in run $r ($WHY)"; log "$t: ${STATUS[$t]}"
    fi
  done
done
for t in $TARGETS; do
  [ -n "${STATUS[$t]:-}" ] || STATUS[$t]=ok
  # a run whose shutdown left processes behind is worth knowing about in the status too
  o=$(awk -F'\t' -v t="$t" '$1 == t && $13 != "none" { print "run " $2 ": " $13 }' "$WORK/runs.tsv" | tr '\n' ';')
  [ -z "$o" ] || STATUS[$t]="${STATUS[$t]}; processes left after the server exited (killed): $o"
done

# --- report ---------------------------------------------------------------------------------
median() { # TARGET COLUMN -> median over runs, or empty
  awk -F'\t' -v t="$1" -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == t { print $col[k] + 0 }' "$WORK/runs.tsv" | sort -g |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
mb() { [ -n "$1" ] && awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }' || echo "–"; }
secs() { [ -n "$1" ] && awk -v m="$1" 'BEGIN { printf "%.2f", m / 1000 }' || echo "–"; }
goal() { # LABEL VALUE LIMIT LIMIT_TEXT
  [ "$2" != "–" ] || { echo "- $1: not measured"; return; }
  awk -v v="$2" -v l="$3" -v lt="$4" -v label="$1" 'BEGIN {
    printf "- %s: %s (goal <= %s) -> **%s**\n", label, v, lt, v <= l ? "met" : "NOT met" }'
}
declare -A READY=() PSS=()
for t in $ALL_TARGETS; do READY[$t]=$(median "$t" ready_ms); PSS[$t]=$(median "$t" pss_kb); done
complete=yes
for t in $ALL_TARGETS; do [ "${STATUS[$t]:-}" = ok ] || complete=no; done
repo_path() { sed "s|$WORK/repo-oxiserve|\$REPO_OXISERVE|; s|$WORK/repo-triton|\$REPO_TRITON|"; }

mkdir -p "$(dirname "$RESULTS")"
{
  echo "# Python backend: start-up time and memory, $MODELS small Python models, oxiserve vs real Triton"
  echo
  if [ $complete = no ]; then
    echo "**Partial run** (TARGETS=\"$TARGETS\"): see *Targets* for what was not measured, and why."
    echo
  fi
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r); nothing pinned; before the runs, other processes kept the CPUs $(for t in $TARGETS; do echo -n "${BUSY[$t]} "; done| sed 's/ $//; s/ /, /g') busy (2 s samples)"
  echo "- $RUNS starts per target, alternating targets; medians. Ready: process start -> first 200 from \`GET /v2/health/ready\` (polled with curl every 20 ms; both servers' readiness is strict: all models loaded); then one inference per model must answer correctly. Memory $SETTLE s after ready: sum of \`Pss\` from \`/proc/PID/smaps_rollup\` over the server and all its descendants (RSS for comparison counts shared pages once per process)"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)'), Triton ${VERSION[triton]:-?} (from nvidia-pytriton 0.7.0, Python backend)"
  echo "- Python: Triton's stubs run $(pyver "$HOME/.cache/real-triton/venv/bin/python3") (\`~/.cache/real-triton/venv\`); oxiserve's default interpreter here is \`.venv/bin/python3\` next to the binary's ancestors: $(pyver .venv/bin/python3)${OXISERVE_ARGS:+ (OXISERVE_ARGS may pick another)}"
  echo "- Reference from issue 6 (real Triton, same machine): 9 s to ready, 930 MB"
  echo
  echo "## Commands"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" RUNS=$RUNS MODELS=$MODELS SETTLE=$SETTLE BUILD=$BUILD${OXISERVE_ARGS:+ OXISERVE_ARGS=\"$OXISERVE_ARGS\"}${TRITON_ARGS:+ TRITON_ARGS=\"$TRITON_ARGS\"} bench/python_startup.sh"
  echo "cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch$([ "$BUILD" = 1 ] || echo '   # not run: BUILD=0')"
  echo "# servers, one at a time (\$REPO_*: temporary model repositories, the same files, see below)"
  cmd oxiserve | repo_path
  cmd triton | repo_path
  echo '```'
  echo
  echo "Models \`tiny_00\` ... \`tiny_$(printf '%02d' $((MODELS - 1)))\`, each (with its own K):"
  echo
  echo '```'
  cat "$WORK/repo-triton/tiny_01/config.pbtxt" 2>/dev/null || cat "$WORK/repo-triton/tiny_00/config.pbtxt"
  echo '```'
  echo
  echo '```python'
  cat "$WORK/repo-triton/tiny_01/1/model.py" 2>/dev/null || cat "$WORK/repo-triton/tiny_00/1/model.py"
  echo '```'
  echo
  echo "## Results (medians of $RUNS starts)"
  echo
  echo "| target | ready s | PSS MB (server + descendants) | server PSS MB | processes | RSS MB (sum) | /dev/shm new | /dev/shm mapped | memfds mapped | /dev/shm left after exit | shutdown s |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for t in $ALL_TARGETS; do
    if ! grep -q "^$t	" "$WORK/runs.tsv"; then
      echo "| $t | $([ -n "${STATUS[$t]:-}" ] && echo 'failed, see *Targets*' || echo 'not run') | – | – | – | – | – | – | – | – | – |"; continue
    fi
    echo "| $t | $(secs "${READY[$t]}") | $(mb "${PSS[$t]}") | $(mb "$(median "$t" server_pss_kb)") | $(median "$t" procs) | $(mb "$(median "$t" rss_kb)") | $(median "$t" shm_new) | $(median "$t" shm_mapped) | $(median "$t" memfd_mapped) | $(median "$t" shm_left) | $(secs "$(median "$t" shutdown_ms)") |"
  done
  echo
  echo "## Goals (issues 6 and 27)"
  echo
  goal "ready time, oxiserve/Triton" "$(ratio "${READY[oxiserve]}" "${READY[triton]}")" 0.2 "1/5"
  goal "memory (PSS sum), oxiserve/Triton" "$(ratio "${PSS[oxiserve]}" "${PSS[triton]}")" 0.33333 "1/3"
  echo "- the PyTorch backend's library beside the binary (\`target/release/libtriton_pytorch.so\`): $([ -f target/release/libtriton_pytorch.so ] && echo yes || echo no); processes of oxiserve's tree mapping libtorch, per run: $(cat "$WORK"/oxiserve.*.libtorch 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
  echo "- for information, RSS sum (counts every shared page once per process; the issue's 930 MB reference is close to Triton's RSS sum, not its PSS sum), oxiserve/Triton: $(ratio "$(median oxiserve rss_kb)" "$(median triton rss_kb)")"
  echo
  echo "## PSS by process (run 1)"
  echo
  echo "| target | command | processes | PSS MB |"
  echo "| --- | --- | ---: | ---: |"
  for t in $ALL_TARGETS; do
    [ -f "$WORK/$t.1.procs" ] || continue
    while IFS=$'\t' read -r c n k; do echo "| $t | \`$c\` | $n | $(mb "$k") |"; done <"$WORK/$t.1.procs"
  done
  echo
  echo "## Targets"
  echo
  for t in $ALL_TARGETS; do echo "- $t: ${STATUS[$t]:-not run (not in TARGETS)}"; done
  echo
  echo "## All runs"
  echo
  echo "| target | run | ready ms | PSS kB | server PSS kB | processes | RSS kB | /dev/shm mapped | memfds mapped | /dev/shm new | /dev/shm left | shutdown ms | left running after exit |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  tail -n +2 "$WORK/runs.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >"$RESULTS"
log "wrote $RESULTS"
