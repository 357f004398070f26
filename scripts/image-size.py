#!/usr/bin/env python3
"""Estimates the uncompressed size of the Dockerfile's two images from what
their layers hold, without a Docker engine:

- debian:bookworm-slim itself: the size `docker images` shows for it (amd64);
- the Debian packages each image adds to it (Installed-Size from apt's
  metadata, dependencies included, minus those already in the base: the
  `Priority: required` packages and apt, as in Debian's minbase);
- the stripped release binary (target/release/oxiserve, run through `strip`);
- ONNX Runtime's libraries and the numpy install, measured in .venv, which
  holds the same pinned wheels (scripts/python-env.sh).

Run from the checkout after `cargo build --release --bin oxiserve`.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# `docker images` for debian:bookworm-slim on amd64 (2025 builds).
DEBIAN_SLIM_MB = 74.8
SLIM_PACKAGES = ["ca-certificates", "tini"]
FULL_PACKAGES = ["python3"]
MB = 1_000_000  # as `docker images` counts


def apt(*args):
    return subprocess.run(["apt-cache", *args], capture_output=True, text=True,
                          check=True).stdout


def closure(packages):
    """The packages and everything they depend on (alternatives included)."""
    out = apt("depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
              "--no-breaks", "--no-replaces", "--no-enhances", *packages)
    return {line for line in out.splitlines() if line and not line[0].isspace()
            and not line.startswith("<")}


def installed_bytes(packages):
    """Sum of the candidates' Installed-Size (KiB in the metadata)."""
    out = apt("show", "--no-all-versions", *packages)
    return sum(int(line.split()[1]) * 1024 for line in out.splitlines()
               if line.startswith("Installed-Size:"))


def base_packages():
    required, package = [], None
    for line in apt("dumpavail").splitlines():
        if line.startswith("Package: "):
            package = line.split()[1]
        elif line == "Priority: required":
            required.append(package)
    return closure(sorted(set(required)) + ["apt"])


def tree_bytes(*paths):
    return sum(f.stat().st_size for p in paths for f in [p, *p.rglob("*")]
               if f.is_file() and not f.is_symlink())


def stripped_binary_bytes():
    binary = ROOT / "target/release/oxiserve"
    if not binary.is_file():
        sys.exit(f"{binary} is missing: cargo build --release --bin oxiserve")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "oxiserve"
        subprocess.run(["strip", "-o", str(out), str(binary)], check=True)
        return out.stat().st_size


def main():
    site = next((ROOT / ".venv/lib").glob("python3*/site-packages"), None)
    if site is None:
        sys.exit(".venv is missing: run scripts/python-env.sh")
    base = base_packages()
    slim_debs = closure(SLIM_PACKAGES) - base
    full_debs = closure(FULL_PACKAGES) - base - slim_debs
    ort_libs = (site / "onnxruntime/capi").glob("libonnxruntime*.so*")
    numpy = [site / "numpy", site / "numpy.libs", *site.glob("numpy-*.dist-info")]
    layers = [
        ("debian:bookworm-slim", DEBIAN_SLIM_MB * MB, "slim"),
        (f"Debian packages: {', '.join(sorted(slim_debs))}", installed_bytes(slim_debs), "slim"),
        ("oxiserve (release, stripped)", stripped_binary_bytes(), "slim"),
        ("ONNX Runtime libraries", tree_bytes(*ort_libs), "slim"),
        (f"Debian packages: {', '.join(sorted(full_debs))}", installed_bytes(full_debs), "full"),
        ("numpy in the venv", tree_bytes(*numpy), "full"),
    ]
    totals = {"slim": 0, "full": 0}
    for what, size, image in layers:
        print(f"{size / MB:8.1f} MB  {image:4}  {what}")
        totals[image] += size
    print(f"\nslim: {totals['slim'] / MB:.0f} MB; "
          f"full: {(totals['slim'] + totals['full']) / MB:.0f} MB")


if __name__ == "__main__":
    main()
