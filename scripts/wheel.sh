#!/usr/bin/env bash
# Builds the `pip install oxiserve` wheel into target/wheels/ and prints its
# path: the release oxiserve binary (without the PyTorch backend, which
# needs libtorch at build and run time) and oxiserve-perf, depending on the
# numpy and onnxruntime wheels (python/pyproject.toml). maturin builds it and
# tags it with the lowest manylinux tag the binaries' glibc symbols and
# libraries allow (plain `linux` if none, which tests/deploy/test_wheel.py
# refuses); `auditwheel show` then prints that policy. Both tools live in a
# venv of their own, target/wheel-tools.
#
#   scripts/wheel.sh          the release wheel (a long build on a small machine)
#   scripts/wheel.sh --dev    the same wheel from debug binaries: what CI tests
#                             (tests/deploy/test_wheel.py), reusing every
#                             dependency CI's debug build compiled
#                             (crates/workspace-hack says how)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
case "${1:-}" in
  "") ;;
  --dev) profile=dev ;;
  *) echo "usage: scripts/wheel.sh [--dev]" >&2; exit 2 ;;
esac
out_dir=$([ "$profile" = dev ] && echo debug || echo release)

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
cargo build --locked --profile "$profile" -p oxiserve-perf
scripts=target/wheel-data/scripts
rm -rf "$scripts"
mkdir -p "$scripts"
cp "${CARGO_TARGET_DIR:-target}/$out_dir/oxiserve-perf" "$scripts/"
strip "$scripts/oxiserve-perf"  # as maturin strips oxiserve (pyproject.toml)

wheels=$PWD/target/wheels
rm -f "$wheels"/oxiserve-*.whl
(cd python && "../$tools/bin/maturin" build --profile "$profile" --out "$wheels")
wheel=$(ls "$wheels"/oxiserve-*.whl)
"$tools/bin/auditwheel" show "$wheel" >&2
echo "$wheel"
