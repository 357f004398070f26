#!/usr/bin/env bash
# Builds the `pip install oxiserve` wheel into target/wheels/ and prints its
# path: the release oxiserve binary (without the PyTorch backend, which
# needs libtorch at build and run time) and oxiserve-perf, depending on the
# numpy and onnxruntime wheels (python/pyproject.toml). maturin builds it and
# tags it with the lowest manylinux tag the binaries' glibc symbols and
# libraries allow (plain `linux` if none, which tests/deploy/test_wheel.py
# refuses); `auditwheel show` then prints that policy. Both tools live in a
# venv of their own, target/wheel-tools. A release build: long on a small
# machine, so CI does not run it (test_wheel.py skips without a wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

tools=target/wheel-tools
versions="maturin==1.16.0 auditwheel==6.8.2"
if [ "$(cat "$tools/.versions" 2>/dev/null)" != "$versions" ]; then
  python3 -m venv "$tools"
  # shellcheck disable=SC2086 # one argument per package
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check $versions
  echo "$versions" > "$tools/.versions"
fi

# oxiserve-perf is another package's binary: the wheel carries it as a
# script (python/pyproject.toml's `data`), installed beside oxiserve.
cargo build --locked --release -p oxiserve-perf
scripts=target/wheel-data/scripts
rm -rf "$scripts"
mkdir -p "$scripts"
cp "${CARGO_TARGET_DIR:-target}/release/oxiserve-perf" "$scripts/"
strip "$scripts/oxiserve-perf"  # as maturin strips oxiserve (pyproject.toml)

wheels=$PWD/target/wheels
rm -f "$wheels"/oxiserve-*.whl
(cd python && "../$tools/bin/maturin" build --release --out "$wheels")
wheel=$(ls "$wheels"/oxiserve-*.whl)
"$tools/bin/auditwheel" show "$wheel" >&2
echo "$wheel"
