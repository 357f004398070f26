#!/usr/bin/env python3
"""Checks that crates/workspace-hack is up to date: building the wheel's
binaries alone (`oxiserve` and `oxiserve-perf`, as scripts/wheel.sh does)
must resolve every dependency with the features the whole workspace's build
(`--workspace`, as CI builds it, the PyTorch backend's library included)
gives it, so the wheel's build compiles no dependency again.
Exits 1 and prints each dependency whose features differ."""

import subprocess
import sys

WORKSPACE = ["--workspace"]
WHEEL = ["-p", "oxiserve", "-p", "oxiserve-perf"]


def resolved(selection):
    """`name version [features]` of every package the selection builds."""
    run = subprocess.run(
        ["cargo", "tree", "--locked", *selection, "-e", "normal,build", "--prefix", "none",
         "--no-dedupe", "-f", "{p} [{f}]"],
        capture_output=True, text=True,
    )
    if run.returncode != 0:
        sys.exit(f"workspace-hack: `cargo tree {' '.join(selection)}` failed:\n{run.stderr}")
    out = run.stdout
    return {line for line in out.splitlines() if line and not line.endswith("(*)")}


def main():
    workspace = resolved(WORKSPACE)
    stale = sorted(resolved(WHEEL) - workspace)
    for line in stale:
        print(f"workspace-hack: the wheel's build resolves `{line}`, the workspace's build "
              "does not: add the workspace's features of it to crates/workspace-hack/Cargo.toml")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
