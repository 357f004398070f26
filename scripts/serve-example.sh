#!/usr/bin/env bash
# Builds oxiserve (release) and serves the example model repository.
# Extra arguments go to oxiserve, e.g. --log-verbose=1.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked -p oxiserve
exec target/release/oxiserve --model-repository=examples/model_repository "$@"
