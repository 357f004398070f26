#!/usr/bin/env bash
# Builds oxiserve (release, with the PyTorch backend's library beside it:
# opened only if a PyTorch model loads), sets up the Python its
# Python models need (.venv, found by the binary on its own) and serves the
# example model repository.
# Extra arguments go to oxiserve, e.g. --log-verbose=1.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-env.sh
# The PyTorch backend's library builds against the venv's libtorch (the torch wheel).
LIBTORCH="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch"
export LIBTORCH
cargo build --release --locked -p oxiserve -p oxiserve-backend-pytorch
exec target/release/oxiserve --model-repository=examples/model_repository "$@"
