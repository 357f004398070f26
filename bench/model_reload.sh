#!/usr/bin/env bash
# Reloads under traffic: a Python model reloaded RELOADS (20) times while CLIENTS (4)
# keep-alive HTTP clients send requests, by explicit load (POST .../load with a config
# override) and by poll (config.pbtxt rewritten; --repository-poll-secs=1), on
#   oxiserve - target/release/oxiserve
#   triton   - real Triton 2.51 (/work/shared/tools/real-triton.sh)
# one server at a time. Reports per target and mode: requests answered, failed requests
# (by error), reload time (until the clients see the new model's answers: median, max),
# and memory before the reloads (after two warm-up reloads) and after them (server RSS;
# PSS of the server and its descendants). Results: bench/results/model_reload.md.
#
#   bench/model_reload.sh
#   TARGETS=oxiserve MODES=poll bench/model_reload.sh
#
# Settings (environment): TARGETS (oxiserve triton), MODES (explicit poll), RELOADS (20),
# CLIENTS (4), BUILD (1: cargo build the release binary first), RESULTS.
# Ports: 18390-18392 (oxiserve), 18395-18397 (triton).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-oxiserve triton}
MODES=${MODES:-explicit poll}
export RELOADS=${RELOADS:-20} CLIENTS=${CLIENTS:-4}
BUILD=${BUILD:-1}
RESULTS=${RESULTS:-bench/results/model_reload.md}
PYTHON=.venv/bin/python

[ "$BUILD" = 1 ] && cargo build --release --locked --bin oxiserve
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flags() { # MODE
  case $1 in
    explicit) echo "--model-control-mode=explicit --load-model=m" ;;
    poll) echo "--model-control-mode=poll --repository-poll-secs=1" ;;
  esac
}

lines=()
for target in $TARGETS; do
  for mode in $MODES; do
    repo=$work/$target-$mode/repo
    mkdir -p "$repo"
    if [ "$target" = oxiserve ]; then
      port=18390
      cmd=(target/release/oxiserve "--model-repository=$repo" --http-port=$port --grpc-port=18391 --metrics-port=18392)
    else
      port=18395
      cmd=(bash /work/shared/tools/real-triton.sh "--model-repository=$repo" --http-port=$port --grpc-port=18396 --metrics-port=18397)
    fi
    # shellcheck disable=SC2046
    line=$($PYTHON bench/reload/drive.py "$target" "$mode" "$repo" $port -- "${cmd[@]}" $(flags "$mode"))
    echo "$line"
    lines+=("$line")
  done
done

{
  echo "# Reloads under traffic: oxiserve vs real Triton"
  echo
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); servers and clients share the CPUs"
  echo "- Versions: oxiserve $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (uncommitted changes)'), Triton 2.51.0 (Python backend)"
  echo "- A Python model (FP32 [4] in, its config's tag out, 1 instance) reloaded $RELOADS times after 2 warm-up reloads, while $CLIENTS HTTP clients (keep-alive, one request at a time each) send requests; a reload counts as done when a client gets the new tag back"
  echo
  echo "## Command"
  echo
  echo '```sh'
  echo "TARGETS=\"$TARGETS\" MODES=\"$MODES\" RELOADS=$RELOADS CLIENTS=$CLIENTS bench/model_reload.sh"
  echo '```'
  echo
  echo "Servers: \`--model-control-mode=explicit --load-model=m\` (reload: \`POST /v2/repository/models/m/load\` with a \`config\` parameter) or \`--model-control-mode=poll --repository-poll-secs=1\` (reload: config.pbtxt rewritten). Driver: \`bench/reload/drive.py\`."
  echo
  echo "## Results"
  echo
  echo "| target | mode | requests | failed | reload s (median / max) | server RSS MB before -> after | PSS MB (tree) before -> after | failures |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
  for line in "${lines[@]}"; do
    $PYTHON - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
if "error" in r:
    print(f"| {r['target']} | {r['mode']} | – | – | – | – | – | error: {r['error']} |")
    sys.exit()
mb = lambda kb: f"{kb / 1024:.0f}"
failed = sum(r["failures"].values())
why = "; ".join(f"{n}x {k}" for k, n in r["failures"].items()) or "none"
print(f"| {r['target']} | {r['mode']} | {r['requests']} | {failed} | "
      f"{r['reload_s_median']:.2f} / {r['reload_s_max']:.2f} | "
      f"{mb(r['before'][0])} -> {mb(r['after'][0])} | {mb(r['before'][1])} -> {mb(r['after'][1])} | {why} |")
PY
  done
} >"$RESULTS"
echo "results: $RESULTS"
