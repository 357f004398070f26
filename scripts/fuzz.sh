#!/usr/bin/env bash
# Fuzzes every decoder of outside bytes: the cargo-fuzz targets in fuzz/
# (libFuzzer, coverage-guided), each for FUZZ_SECONDS (default 20), starting
# from its committed seeds in fuzz/corpus/<target>/ and what earlier runs
# found (fuzz/target/corpus/<target>/, not committed). Prints one line per
# target and exits 1 if any target fails; the input that broke it is in
# fuzz/artifacts/<target>/ (replay: cargo fuzz run -O -a -s none <target> <file>).
#
# Runs on stable Rust as it is: without a sanitizer cargo-fuzz passes no -Z
# flag. (AddressSanitizer, -s address, needs RUSTC_BOOTSTRAP=1 on stable and
# runs several times slower; the code under test is safe Rust, and a panic,
# an abort or a hang is what the targets look for.)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

cargo_fuzz_version=0.13.2
seconds=${FUZZ_SECONDS:-20}
if [[ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]]; then
    cargo install cargo-fuzz --version "$cargo_fuzz_version" --locked
fi
# Release code (fuzz/Cargo.toml: opt-level 1) with overflow checks and
# debug assertions, no sanitizer; built once, reused by every run.
flags=(-O -a -s none)
cargo fuzz build "${flags[@]}"

status=0
for target in $(cargo fuzz list); do
    mkdir -p "target/corpus/$target"
    log="target/fuzz-$target.log"
    # New inputs go to the first folder, so the seeds stay as committed;
    # an input that takes over 10 s counts as a failure (a hang).
    if cargo fuzz run "${flags[@]}" "$target" "target/corpus/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 >"$log" 2>&1; then
        # libFuzzer's last status line: "#N DONE cov: C ft: F corp: K/S ...".
        done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
        read -r runs _ _ cov _ features _ corpus _ <<<"$done_line"
        echo "fuzz: $target ok: ${runs#\#} runs in ${seconds}s, coverage $cov, features $features, corpus $corpus"
    else
        tail -n 40 "$log"
        echo "fuzz: $target FAILED (log: fuzz/$log, input: fuzz/artifacts/$target/)"
        status=1
    fi
done
exit $status
