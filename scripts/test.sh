#!/usr/bin/env bash
# Runs every check and test of oxiserve: formatting, the crate layout
# (DESIGN.md), clippy with warnings as errors, and all Rust tests, which
# include end-to-end tests of the real binary.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
python3 scripts/check_layout.py
cargo clippy --workspace --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# One closing line for the whole run (cargo's last line is the doc tests').
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "rust: %d passed, %d failed\n", passed, failed }' "$log"
