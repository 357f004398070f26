#!/usr/bin/env bash
# Runs every check and test of oxiserve: formatting, the crate layout
# (DESIGN.md), clippy with warnings as errors, all Rust tests (which include
# end-to-end tests of the real binary), 20 s of fuzzing per decoder
# (scripts/fuzz.sh), and the Python end-to-end suite in
# tests/ (the real binary driven by the real tritonclient). Ends with one line
# counting every test.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
python3 scripts/check_layout.py
python3 scripts/check_workspace_hack.py
# The Python environment first: the PyTorch backend builds against its
# libtorch (the torch wheel), and Rust tests load ONNX Runtime's library from it.
scripts/python-env.sh
# The system tools some tests start (redis-server, prometheus, nginx, ...).
scripts/tools.sh
LIBTORCH="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch"
export LIBTORCH
# Every cargo command selects the whole workspace (the PyTorch backend's
# library included), so its dependencies compile once.
cargo clippy --workspace --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log" || status=1
rust=$(awk '/^test result:/ { p += $4; f += $6 } END { printf "%d %d", p, f }' "$log")
echo "rust: ${rust% *} passed, ${rust#* } failed"
# Every decoder of outside bytes, fuzzed briefly (fuzz/, its own workspace).
scripts/fuzz.sh || status=1

# End-to-end: the debug binaries (oxiserve, oxiserve-perf) and the PyTorch
# backend's library beside them (libtriton_pytorch.so) over real sockets;
# the same selection as above, so nothing compiles twice.
cargo build --workspace --locked
# The `pip install oxiserve` wheel from the same debug build, for
# tests/deploy/test_wheel.py. It builds `oxiserve` alone, sharing every
# compiled dependency (scripts/check_workspace_hack.py checks that); the
# second build puts the workspace's own oxiserve binary back.
scripts/wheel.sh --dev
cargo build --workspace --locked
# The end-to-end suite (tests/), then the Python stub's own tests
# (backends/python/python/tests: the stub driven through its socket and
# arenas, no server).
# pytest's summary is its last line: "3 failed, 160 passed, 1 error in 4.2s".
count() { grep -Eo "[0-9]+ $1" <<<"$summary" | grep -Eo '[0-9]+' || echo 0; }
py_passed=0
py_failed=0
for suite in tests backends/python/python/tests; do
    .venv/bin/python -m pytest "$suite" -q -p no:cacheprovider 2>&1 | tee "$log" || status=1
    summary=$(tail -1 "$log")
    py_passed=$(( py_passed + $(count passed) ))
    py_failed=$(( py_failed + $(count failed) + $(count error) ))
done

echo "all: $(( ${rust% *} + py_passed )) passed, $(( ${rust#* } + py_failed )) failed"
exit $status
