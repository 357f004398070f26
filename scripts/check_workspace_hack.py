#!/usr/bin/env python3
"""Checks that crates/workspace-hack is up to date: building the wheel's
binaries alone (`oxiserve` without PyTorch, and `oxiserve-perf`, as
scripts/wheel.sh does) must resolve every dependency with the features the
whole workspace's build (`--workspace --features oxiserve/pytorch`, as CI
builds it) gives it, so the wheel's build compiles no dependency again.
Exits 1 and prints each dependency whose features differ."""

import subprocess
import sys

WORKSPACE = ["--workspace", "--features", "oxiserve/pytorch"]
WHEEL = ["-p", "oxiserve", "-p", "oxiserve-perf"]
# The package whose features the two builds choose differently on purpose.
DIFFERS_ON_PURPOSE = "oxiserve "


def resolved(selection):
    """`name version [features]` of every package the selection builds."""
    out = subprocess.run(
        ["cargo", "tree", "--locked", *selection, "-e", "normal,build", "--prefix", "none",
         "--no-dedupe", "-f", "{p} [{f}]"],
        check=True, capture_output=True, text=True,
    ).stdout
    return {line for line in out.splitlines() if line and not line.endswith("(*)")}


def main():
    workspace = resolved(WORKSPACE)
    stale = sorted(
        line for line in resolved(WHEEL) - workspace if not line.startswith(DIFFERS_ON_PURPOSE)
    )
    for line in stale:
        print(f"workspace-hack: the wheel's build resolves `{line}`, the workspace's build "
              "does not: add the workspace's features of it to crates/workspace-hack/Cargo.toml")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
