#!/usr/bin/env bash
# Soak: DURATION (1800 s) of mixed traffic against target/release/oxiserve:
# HTTP_CLIENTS (4) keep-alive HTTP clients (identity INT32 [1,16] and the
# add_sub Python model, answers checked), GRPC_CLIENTS (4) tritonclient.grpc
# clients (add_sub), a reload of add_sub every RELOAD_EVERY (10) s by
# explicit load, and a shared memory region registered, used and
# unregistered every 0.2 s. Samples the server's RSS, open descriptors and
# /dev/shm entries every SAMPLE_EVERY (30) s. Every request must succeed:
# reloads are planned, not errors. Results: bench/results/soak.md.
#
#   bench/soak.sh
#   DURATION=120 bench/soak.sh      # a short check
#
# Settings (environment): DURATION, HTTP_CLIENTS, GRPC_CLIENTS, RELOAD_EVERY,
# SAMPLE_EVERY, BUILD (1: build the release binary first), RESULTS.
# Ports: 18380-18382.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/common.sh

export DURATION=${DURATION:-1800}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/soak.md}
PYTHON=.venv/bin/python

[ "$BUILD" = 1 ] && cargo build --release --locked --bin oxiserve
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

repo=$work/repo
mkdir -p "$repo/identity/1" "$repo/add_sub"
cp -r examples/model_repository/add_sub/. "$repo/add_sub/"
cat > "$repo/identity/config.pbtxt" <<'PBTXT'
name: "identity"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_INT32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_INT32, dims: [ 16 ] } ]
PBTXT

target/release/oxiserve "--model-repository=$repo" --http-port=18380 --grpc-port=18381 \
  --metrics-port=18382 --model-control-mode=explicit --load-model='*' > "$work/server.log" 2>&1 &
server=$!
await_ready 18380 "$server" 60 identity add_sub || { cat "$work/server.log"; exit 1; }
started=$(date -u +%FT%TZ)
summary=$($PYTHON bench/soak/drive.py 18380 18381 "$server")
kill -TERM "$server"
wait "$server" && exit_status=0 || exit_status=$?
server=

$PYTHON - "$summary" "$started" "$DURATION" "$exit_status" "$(git rev-parse --short HEAD)" \
  > "$RESULTS" <<'PY'
import json, sys
summary, started, duration, status, commit = sys.argv[1:]
s = json.loads(summary)
counts, errors, samples = s["counts"], s["errors"], s["samples"]
first, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
print("# Soak: mixed HTTP/gRPC traffic with reloads and shared memory\n")
print(f"Machine: 2 CPUs, 24 GiB. Commit {commit}. Started {started}, {duration} s.\n")
print("Command: `bench/soak.sh`" + (f" with `DURATION={duration}`" if duration != "1800" else "") + "\n")
print("| what | count | errors |\n| --- | ---: | ---: |")
for kind in ("http", "grpc", "shm", "reload"):
    bad = sum(n for e, n in errors.items() if e.startswith(kind + ":"))
    print(f"| {kind} | {counts.get(kind, 0)} | {bad} |")
print(f"\nErrors in all: **{sum(errors.values())}**; exit status after SIGTERM: {status}.\n")
for error, n in sorted(errors.items(), key=lambda kv: -kv[1])[:20]:
    print(f"- {n} x `{error}`")
print("\nServer over time (first row: before traffic; RSS after warm-up is the second row):\n")
print("| s | RSS (MB) | descriptors | /dev/shm entries | requests so far |\n| ---: | ---: | ---: | ---: | ---: |")
for row in samples:
    print(f"| {row['t']} | {row['rss_kb'] / 1024:.1f} | {row['fds']} | {row['dev_shm']} | {row['requests']} |")
print(f"\nRSS from the first sample under traffic to the last: {first['rss_kb'] / 1024:.1f} -> "
      f"{last['rss_kb'] / 1024:.1f} MB; descriptors {first['fds']} -> {last['fds']}.")
PY
cat "$RESULTS"
