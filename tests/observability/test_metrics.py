"""Prometheus metrics on the metrics port: Triton 2.51's families, help texts,
types and labels, counters that move by exactly the requests made, and
oxiserve's own latency histograms. The models here are used by this file only.

The output is checked with `promtool check metrics` (Debian's `prometheus`
package; scripts/tools.sh installs it). Triton's family names break
Prometheus' naming conventions (no `_total`, `_us`, `_count` on counters and
gauges); those lint messages are expected on both servers, anything else fails.
"""

import re
import shutil
import socket
import subprocess
import threading
import time

import pytest
import requests

from helpers import Http, expect_error, wait_for
from models import ModelSpec, Tensor, identity, write_repository
from scrapes import metrics_port as _metrics_port
from scrapes import scrape
from servers import TARGET, Server

SLOW_MS = 500

# Triton 2.51's families: name -> (type, help).
TRITON_FAMILIES = {
    "nv_inference_request_success": (
        "counter", "Number of successful inference requests, all batch sizes"),
    "nv_inference_request_failure": (
        "counter", "Number of failed inference requests, all batch sizes"),
    "nv_inference_count": (
        "counter", "Number of inferences performed (does not include cached requests)"),
    "nv_inference_exec_count": (
        "counter", "Number of model executions performed (does not include cached requests)"),
    "nv_inference_request_duration_us": (
        "counter",
        "Cumulative inference request duration in microseconds (includes cached requests)"),
    "nv_inference_queue_duration_us": (
        "counter",
        "Cumulative inference queuing duration in microseconds (includes cached requests)"),
    "nv_inference_compute_input_duration_us": (
        "counter",
        "Cumulative compute input duration in microseconds (does not include cached requests)"),
    "nv_inference_compute_infer_duration_us": (
        "counter",
        "Cumulative compute inference duration in microseconds "
        "(does not include cached requests)"),
    "nv_inference_compute_output_duration_us": (
        "counter",
        "Cumulative inference compute output duration in microseconds "
        "(does not include cached requests)"),
    "nv_inference_pending_request_count": (
        "gauge", "Instantaneous number of pending requests awaiting execution per-model."),
    "nv_cpu_utilization": ("gauge", "CPU utilization rate [0.0 - 1.0]"),
    "nv_cpu_memory_total_bytes": ("gauge", "CPU total memory (RAM), in bytes"),
    "nv_cpu_memory_used_bytes": ("gauge", "CPU used memory (RAM), in bytes"),
}
# Triton's pinned memory pool gauges (no labels): the pool's size as asked
# for (--pinned-memory-pool-byte-size, 256 MiB by default) and 0 used, on a
# server that allocates no pinned memory (as Triton without GPUs).
PINNED_FAMILIES = {
    "nv_pinned_memory_pool_total_bytes": (
        "gauge", "Pinned memory pool total memory size, in bytes"),
    "nv_pinned_memory_pool_used_bytes": (
        "gauge", "Pinned memory pool used memory size, in bytes"),
}
LATENCY_COUNTERS = [name for name in TRITON_FAMILIES if name.endswith("_duration_us")]
CPU_FAMILIES = ["nv_cpu_utilization", "nv_cpu_memory_total_bytes", "nv_cpu_memory_used_bytes"]
REASONS = ["OTHER", "BACKEND", "CANCELED", "REJECTED"]
OXI_HISTOGRAMS = [
    "oxi_inference_request_duration_us",
    "oxi_inference_queue_duration_us",
    "oxi_inference_compute_infer_duration_us",
]
# promtool's naming-convention lint messages, which Triton's names draw.
NAMING_LINTS = re.compile(
    r'counter metrics should have "_total" suffix'
    r'|metric names should not contain abbreviated units'
    r'|non-histogram and non-summary metrics should not have "_count" suffix'
)
def _rows(rows):
    return {"inputs": [{"name": "INPUT0", "shape": [rows, 2], "datatype": "INT32",
                        "data": list(range(rows * 2))}]}


def _infer_ok(http, model, rows=1, version=None):
    resp = http.infer(model, _rows(rows), version=version)
    assert resp.status_code == 200, resp.text


def _settled(server, model, version, successes):
    """A scrape once `successes` requests of the version are counted (a
    server may count a request just after sending its response)."""
    def counted():
        s = scrape(server)
        ok = s.value("nv_inference_request_success", model=model, version=version) >= successes
        return s if ok else None
    return wait_for(counted, what=f"{successes} successes of {model} v{version}")


@pytest.fixture(scope="module")
def metrics_server(tmp_path_factory):
    specs = [
        identity("metrics_versions", "INT32", versions=(1, 2),
                 extra_config="version_policy: { all { } }"),
        ModelSpec("metrics_slow", [Tensor("INPUT0", "INT32", [-1, -1])],
                  execute_delay_ms=SLOW_MS),
    ]
    repo = write_repository(tmp_path_factory.mktemp("metrics"), specs, TARGET)
    with Server(repo, ["--metrics-interval-ms=200"]) as server:
        yield server


def test_families_help_types_and_labels_are_tritons(metrics_server):
    s = scrape(metrics_server)
    for name, (kind, help_text) in TRITON_FAMILIES.items():
        assert s.type.get(name) == kind, name
        assert s.help.get(name) == help_text, name
    for version in (1, 2):
        for name in TRITON_FAMILIES:
            if name.startswith("nv_cpu") or name == "nv_inference_request_failure":
                continue
            s.value(name, model="metrics_versions", version=version)
        for reason in REASONS:
            s.value("nv_inference_request_failure", model="metrics_versions",
                    version=version, reason=reason)
    assert 0.0 <= s.value("nv_cpu_utilization") <= 1.0
    # Triton shows 0 until its first poll of /proc.
    s = wait_for(lambda: (lambda s: s if s.value("nv_cpu_memory_used_bytes") else None)(
        scrape(metrics_server)), what="memory gauges")
    total, used = s.value("nv_cpu_memory_total_bytes"), s.value("nv_cpu_memory_used_bytes")
    assert 0 < used < total


def test_pinned_memory_pool_gauges(metrics_server):
    """Both gauges, with Triton's help and type, between the per-model and
    the CPU families; total is the default pool size, none of it used."""
    total = "nv_pinned_memory_pool_total_bytes"
    # Triton shows 0 until its first poll.
    s = wait_for(lambda: (lambda s: s if s.value(total) else None)(scrape(metrics_server)),
                 what="the pinned memory gauges")
    for name, (kind, help_text) in PINNED_FAMILIES.items():
        assert (s.type.get(name), s.help.get(name)) == (kind, help_text), name
    assert s.value(total) == 256 * 2**20
    assert s.value("nv_pinned_memory_pool_used_bytes") == 0
    families = list(s.type)
    assert families.index("nv_inference_pending_request_count") + 1 == families.index(total)
    assert families.index(total) + 1 == families.index("nv_pinned_memory_pool_used_bytes")
    assert families.index("nv_pinned_memory_pool_used_bytes") + 1 == families.index(
        "nv_cpu_utilization")


def test_pinned_memory_pool_of_0_bytes(start_server):
    """A server without a pinned memory pool reports 0 and 0, with or without
    the CPU families."""
    server = start_server([identity("metrics_pinned", "INT32")],
                          "--pinned-memory-pool-byte-size=0", "--allow-cpu-metrics=false",
                          "--metrics-interval-ms=200")
    s = scrape(server)
    for name in PINNED_FAMILIES:
        assert s.value(name) == 0, name
    for name in CPU_FAMILIES:
        assert name not in s.type, name


def test_counters_move_by_the_requests_made(metrics_server):
    """v1: 3 requests of 1 row; v2: 2 of 1 row and 1 of 3 rows."""
    before = scrape(metrics_server)
    with Http(metrics_server.url) as http:
        for _ in range(3):
            _infer_ok(http, "metrics_versions", version=1)
        for rows in (1, 1, 3):
            _infer_ok(http, "metrics_versions", rows=rows, version=2)
        # Refused by validation: not counted anywhere, as in Triton.
        bad = {"inputs": [{"name": "NOPE", "shape": [1, 2], "datatype": "INT32",
                           "data": [1, 2]}]}
        expect_error(http.infer("metrics_versions", bad, version=1), 400, "NOPE")
    _settled(metrics_server, "metrics_versions", 1, before.value(
        "nv_inference_request_success", model="metrics_versions", version=1) + 3)
    after = _settled(metrics_server, "metrics_versions", 2, before.value(
        "nv_inference_request_success", model="metrics_versions", version=2) + 3)

    def moved(name, version, **labels):
        labels = dict(model="metrics_versions", version=version, **labels)
        return after.value(name, **labels) - before.value(name, **labels)

    expected = {
        1: {"nv_inference_request_success": 3, "nv_inference_count": 3,
            "nv_inference_exec_count": 3},
        2: {"nv_inference_request_success": 3, "nv_inference_count": 5,
            "nv_inference_exec_count": 3},
    }
    for version, counts in expected.items():
        for name, count in counts.items():
            assert moved(name, version) == count, (name, version)
        for reason in REASONS:
            assert moved("nv_inference_request_failure", version, reason=reason) == 0, reason
        assert moved("nv_inference_request_duration_us", version) > 0
        for name in LATENCY_COUNTERS:
            assert moved(name, version) >= 0, name


def test_pending_requests_are_counted(metrics_server):
    """One request executes for SLOW_MS on the only instance; two wait."""
    def request():
        with Http(metrics_server.url) as own:
            _infer_ok(own, "metrics_slow")

    threads = [threading.Thread(target=request) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: scrape(metrics_server).value(
            "nv_inference_pending_request_count", model="metrics_slow", version=1) == 2,
            timeout=SLOW_MS * 2 / 1000, what="two pending requests")
    finally:
        for t in threads:
            t.join()
    s = scrape(metrics_server)
    assert s.value("nv_inference_pending_request_count", model="metrics_slow", version=1) == 0


def test_promtool_accepts_the_output(metrics_server):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool not found: install Debian's 'prometheus' package "
                    "(scripts/tools.sh does it as root)", pytrace=False)
    text = scrape(metrics_server).text
    result = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                            capture_output=True, timeout=60)
    problems = [line for line in (result.stdout + result.stderr).splitlines()
                if line.strip() and not NAMING_LINTS.search(line)]
    # 0: clean; 3: lint messages only (1 would be a parse error).
    assert result.returncode in (0, 3) and not problems, (
        f"promtool exit {result.returncode}:\n" + "\n".join(problems) + f"\n---\n{text}")


def test_other_paths_and_methods_as_triton(metrics_server):
    base = f"http://127.0.0.1:{_metrics_port(metrics_server)}"
    resp = requests.get(base + "/elsewhere", timeout=30)
    assert (resp.status_code, resp.text) == (200, "")
    resp = requests.post(base + "/metrics", timeout=30)
    assert resp.status_code == 405
    assert resp.json() == {"error": "Method Not Allowed"}


@pytest.mark.oxiserve_only
def test_histograms_count_the_successes(metrics_server):
    with Http(metrics_server.url) as http:
        for _ in range(4):
            _infer_ok(http, "metrics_versions", version=2)
    s = _settled(metrics_server, "metrics_versions", 2, 4)
    for name in OXI_HISTOGRAMS:
        assert s.type[name] == "histogram", name
        for version in (1, 2):
            labels = dict(model="metrics_versions", version=version)
            successes = s.value("nv_inference_request_success", **labels)
            count = s.value(f"{name}_count", **labels)
            assert count == successes, (name, version)
            buckets = sorted(
                (float(dict(key)["le"]), value) for (n, key), value in s.samples.items()
                if n == f"{name}_bucket" and dict(key)["model"] == "metrics_versions"
                and dict(key)["version"] == str(version))
            assert buckets[-1] == (float("inf"), count), name
            values = [v for _, v in buckets]
            assert values == sorted(values), f"{name} buckets not cumulative: {values}"
            assert s.value(f"{name}_sum", **labels) >= 0
    assert s.type["oxi_model_load_duration_seconds"] == "gauge"
    assert s.value("oxi_model_load_duration_seconds", model="metrics_slow", version=1) > 0


@pytest.mark.oxiserve_only
def test_a_request_whose_client_left_fails_as_canceled(metrics_server):
    """The second request waits behind a slow one; its client hangs up; it
    is dropped and counted with reason CANCELED (Triton runs it anyway)."""
    before = scrape(metrics_server)
    labels = dict(model="metrics_slow", version=1)

    def occupy():
        with Http(metrics_server.url) as own:
            _infer_ok(own, "metrics_slow")

    occupier = threading.Thread(target=occupy)
    occupier.start()
    time.sleep(SLOW_MS / 5000)  # the first request reaches the idle instance
    body = b'{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","data":[1]}]}'
    head = (f"POST /v2/models/metrics_slow/infer HTTP/1.1\r\nHost: x\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", metrics_server.port)) as sock:
        sock.sendall(head + body)
        wait_for(lambda: scrape(metrics_server).value(
            "nv_inference_pending_request_count", **labels) == 1, what="a queued request")
    occupier.join()
    key = dict(labels, reason="CANCELED")
    after = wait_for(lambda: (lambda s: s if s.value("nv_inference_request_failure", **key)
                              > before.value("nv_inference_request_failure", **key)
                              else None)(scrape(metrics_server)),
                     what="a CANCELED failure")
    assert after.value("nv_inference_request_failure", **key) - before.value(
        "nv_inference_request_failure", **key) == 1
    for reason in ("OTHER", "BACKEND", "REJECTED"):
        other = dict(labels, reason=reason)
        assert after.value("nv_inference_request_failure", **other) == before.value(
            "nv_inference_request_failure", **other), reason


def test_metrics_config_and_cpu_switches(start_server):
    server = start_server([identity("metrics_cfg", "INT32")],
                          "--metrics-config=counter_latencies=false",
                          "--allow-cpu-metrics=false")
    s = scrape(server)
    names = set(s.type)
    assert "nv_inference_request_success" in names
    for name in LATENCY_COUNTERS + CPU_FAMILIES:
        assert name not in names, name


@pytest.mark.oxiserve_only
def test_histograms_can_be_turned_off(start_server):
    server = start_server([identity("metrics_nohist", "INT32")],
                          "--metrics-config=histogram_latencies=false")
    names = set(scrape(server).type)
    assert "nv_inference_request_success" in names
    for name in OXI_HISTOGRAMS:
        assert name not in names, name


def test_allow_metrics_false_serves_no_metrics(start_server):
    server = start_server([identity("metrics_none", "INT32")], "--allow-metrics=false")
    with Http(server.url) as http:
        _infer_ok(http, "metrics_none")
    time.sleep(0.5)  # Triton logs the metrics line just after the HTTP one
    assert server.metrics_port is None, server.output()
