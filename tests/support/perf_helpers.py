"""Runs the `oxiserve-perf` binary and reads what it reports."""

import json
import os
import subprocess
from pathlib import Path

import pytest
import requests

from servers import REPO_ROOT

# Short count windows keep each load level quick on a debug build.
QUICK = [
    "--measurement-mode", "count_windows",
    "--measurement-request-count", "30",
    "--max-trials", "4",
]


def perf_bin():
    path = Path(os.environ.get("OXISERVE_PERF_BIN", REPO_ROOT / "target/debug/oxiserve-perf"))
    if not path.is_file():
        pytest.fail(f"{path} not found: build it with `cargo build -p oxiserve-perf`", pytrace=False)
    return path


def run_perf(*args, timeout=120):
    """Runs the tool to its end: the CompletedProcess (text output)."""
    return subprocess.run(
        [str(perf_bin()), *map(str, args)],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )


def run_report(tmp_path, *args):
    """Runs the tool with --json and returns the parsed report; fails on a non-zero exit."""
    out = tmp_path / "report.json"
    done = run_perf(*args, "--json", out)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return json.loads(out.read_text()), done


def stats(url, model):
    """(requests, inferences) the server has counted for `model`."""
    body = requests.get(f"http://{url}/v2/models/{model}/stats", timeout=10).json()
    entries = [e for e in body["model_stats"] if e["name"] == model]
    success = sum(int(e["inference_stats"]["success"]["count"]) for e in entries)
    fail = sum(int(e["inference_stats"]["fail"]["count"]) for e in entries)
    inferences = sum(int(e["inference_count"]) for e in entries)
    return success + fail, inferences
