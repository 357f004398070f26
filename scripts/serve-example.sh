#!/usr/bin/env bash
# Builds oxiserve (release), sets up the Python its Python models need (.venv,
# found by the binary on its own) and serves the example model repository.
# Extra arguments go to oxiserve, e.g. --log-verbose=1.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-env.sh
cargo build --release --locked -p oxiserve
exec target/release/oxiserve --model-repository=examples/model_repository "$@"
