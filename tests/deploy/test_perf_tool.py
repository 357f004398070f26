"""`oxiserve-perf` against a live server: its request counts equal the
server's statistics deltas, its files have the promised shapes, and bad
input gets a clear error and a non-zero exit."""

import base64
import json
import signal
import struct
import subprocess
from pathlib import Path

import pytest
import requests

from helpers import wait_for
from models import ModelSpec, Tensor, identity, write_repository
from perf_browser import dump_dom, screenshot
from perf_helpers import QUICK, perf_bin, run_perf, run_report, stats
from python_models import repeat_model, serve
from servers import TARGET, Server

FP32 = "perf_fp32"  # FP32 [16], max_batch_size 8
VARIABLE = "perf_var"  # INT32 [-1]
STRINGS = "perf_bytes"  # BYTES [4]
NO_BATCH = "perf_nobatch"  # FP32 [4], max_batch_size 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    specs = [
        identity(FP32, "FP32", dims=(16,)),
        identity(VARIABLE, "INT32", dims=(-1,)),
        identity(STRINGS, "BYTES", dims=(4,)),
        identity(NO_BATCH, "FP32", dims=(4,), max_batch_size=0),
    ]
    repo = write_repository(tmp_path_factory.mktemp("perf_repo"), specs, TARGET)
    with Server(repo) as s:
        yield s


def _server_delta(server, model, before, sent, batch=1):
    """The server's (requests, inferences) deltas once it has counted `sent`
    more requests of `batch` inferences (it may count a request just after
    answering it)."""
    def counted():
        now = stats(server.url, model)
        return now if now[0] - before[0] >= sent and now[1] - before[1] >= batch * sent else None
    try:
        now = wait_for(counted, timeout=10, what=f"{sent} requests in the statistics")
    except AssertionError:
        now = stats(server.url, model)
    return now[0] - before[0], now[1] - before[1]


def _check_point(point, batch=1):
    assert point["requests_sent"] == point["server_requests"], point
    assert 0 < point["measured_requests"] <= point["requests_sent"]
    assert point["errors"] == 0
    lat = point["latency_us"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert lat["min"] <= lat["avg"] <= lat["max"]
    assert point["throughput"] == pytest.approx(point["requests_per_second"] * batch)
    assert point["server"]["requests"] > 0


def test_counts_equal_server_statistics(server, tmp_path):
    before = stats(server.url, FP32)
    report, done = run_report(
        tmp_path, "-m", FP32, "-u", server.url, "-b", 2,
        "--concurrency-range", "1:3:2", "--warmup-request-count", 20, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    requests_delta, inferences_delta = _server_delta(server, FP32, before, sent, batch=2)
    assert sent == requests_delta == report["totals"]["server_requests"]
    assert inferences_delta == 2 * sent
    assert [p["load"] for p in report["points"]] == [1, 3]
    assert sum(p["requests_sent"] for p in report["points"]) == sent
    for point in report["points"]:
        _check_point(point, batch=2)
    assert report["load_kind"] == "concurrency" and report["batch_size"] == 2
    assert "Concurrency: 1, throughput:" in done.stdout
    assert f"requests sent: {sent}, counted by the server: {sent}" in done.stdout


def test_more_worker_threads_count_the_same(server, tmp_path):
    before = stats(server.url, FP32)
    report, _ = run_report(
        tmp_path, "-m", FP32, "-u", server.url, "--concurrency-range", 6,
        "--worker-threads", 3, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, FP32, before, sent)[0] == sent == report["totals"]["server_requests"]
    _check_point(report["points"][0])


def test_csv_has_perf_analyzer_columns(server, tmp_path):
    csv = tmp_path / "out.csv"
    report, _ = run_report(
        tmp_path, "-m", FP32, "-u", f"http://{server.url}/", "--concurrency-range", "1:2",
        "-f", csv, "--input-data", "zero", "--input-tensor-format", "json",
        "--output-tensor-format", "json", *QUICK,
    )
    header, *rows = csv.read_text().splitlines()
    columns = header.split(",")
    assert columns[:3] == ["Concurrency", "Inferences/Second", "Client Send"]
    assert columns[9:14] == ["p50 latency", "p90 latency", "p95 latency", "p99 latency", "Avg latency"]
    assert len(columns) == 16 and len(rows) == 2
    for row, point in zip(rows, report["points"]):
        values = row.split(",")
        assert len(values) == 16
        assert int(values[0]) == point["load"]
        assert float(values[1]) == pytest.approx(point["throughput"], rel=1e-3)
        assert int(values[9]) == point["latency_us"]["p50"]
        _check_point(point)


def test_variable_dims_take_shape_and_data_file(server, tmp_path):
    data = tmp_path / "data.json"
    raw = base64.b64encode(struct.pack("<5i", 8, 9, 10, 11, 12)).decode()
    data.write_text(json.dumps({"data": [
        {"INPUT0": [1, 2, 3]},
        {"INPUT0": {"content": [[4, 5], [6, 7]], "shape": [4]}},
        {"INPUT0": {"b64": raw, "shape": [5]}},
    ]}))
    before = stats(server.url, VARIABLE)
    report, _ = run_report(
        tmp_path, "-m", VARIABLE, "-u", server.url, "--shape", "INPUT0:3",
        "--input-data", data, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, VARIABLE, before, sent)[0] == sent
    _check_point(report["points"][0])


@pytest.mark.parametrize("fmt", ["binary", "json"])
def test_bytes_inputs(server, tmp_path, fmt):
    before = stats(server.url, STRINGS)
    report, _ = run_report(
        tmp_path, "-m", STRINGS, "-u", server.url, "--string-length", 7,
        "--input-tensor-format", fmt, "--output-tensor-format", fmt, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, STRINGS, before, sent)[0] == sent
    _check_point(report["points"][0])


@pytest.mark.parametrize("distribution", ["constant", "poisson"])
def test_request_rate_counts(server, tmp_path, distribution):
    before = stats(server.url, FP32)
    report, done = run_report(
        tmp_path, "-m", FP32, "-u", server.url, "--request-rate-range", "200:400:200",
        "--request-distribution", distribution, "--max-threads", 8, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, FP32, before, sent)[0] == sent
    assert report["load_kind"] == "request_rate" and report["distribution"] == distribution
    assert [p["load"] for p in report["points"]] == [200, 400]
    for point in report["points"]:
        _check_point(point)
        assert point["late_requests"] <= point["measured_requests"]
    assert "Request Rate: 200, throughput:" in done.stdout


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_grpc_counts(server, tmp_path, streaming):
    before = stats(server.url, FP32)
    args = ["--streaming"] if streaming else []
    report, _ = run_report(
        tmp_path, "-m", FP32, "-i", "grpc", "-u", server.grpc_url, *args, "-b", 3,
        "--concurrency-range", "1:2", *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, FP32, before, sent, batch=3) == (sent, 3 * sent)
    assert report["protocol"] == "grpc" and report["streaming"] is streaming
    for point in report["points"]:
        _check_point(point, batch=3)


def test_decoupled_model_over_a_stream(tmp_path):
    """Each request to the decoupled repeat model of 3 values is answered by
    3 responses and an empty final one: the tool counts requests as the
    server does and reports the responses apart."""
    with serve(tmp_path / "repo", [repeat_model("perf_repeat")]) as server:
        before = stats(server.url, "perf_repeat")
        report, done = run_report(
            tmp_path, "-m", "perf_repeat", "-i", "grpc", "-u", server.grpc_url, "--streaming",
            "--shape", "IN:3", "--input-data", "zero", "--concurrency-range", "1:2", *QUICK,
        )
        sent = report["totals"]["requests_sent"]
        assert _server_delta(server, "perf_repeat", before, sent)[0] == sent
        assert report["decoupled"] is True
        for point in report["points"]:
            _check_point(point)
            assert point["measured_responses"] == 3 * point["measured_requests"]
            assert point["responses_per_second"] == pytest.approx(
                3 * point["requests_per_second"])
        assert "responses/sec" in done.stdout and "responses/s" in done.stdout
        # its responses come only over a stream
        for args in (["-u", server.url], ["-i", "grpc", "-u", server.grpc_url]):
            _fails(run_perf("-m", "perf_repeat", *args, "--shape", "IN:3"),
                   "'perf_repeat' is decoupled", "--streaming")


SEQUENCE_PY = '''
import os

import numpy as np
import triton_python_backend_utils as pb_utils


def _value(request, name):
    return pb_utils.get_input_tensor_by_name(request, name).as_numpy().flatten()[0]


class TritonPythonModel:
    def initialize(self, args):
        self.log = open(os.path.join(args["model_repository"], "seen.log"), "a", buffering=1)

    def execute(self, requests):
        for r in requests:
            if _value(r, "READY"):  # Triton fills batch slots with requests that are not
                self.log.write("%d %d %d\\n" % (
                    _value(r, "CORRID"), _value(r, "START"), _value(r, "END")))
        return [pb_utils.InferenceResponse(
            [pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests]
'''


def _sequence_model(name):
    control = lambda n, kind, dt: (  # noqa: E731
        f'{{ name: "{n}" control [ {{ kind: {kind} {dt} }} ] }}')
    return ModelSpec(
        name, [Tensor("INPUT0", "INT32", [1])], max_batch_size=4, python_only=True,
        files={"1/model.py": SEQUENCE_PY},
        extra_config="sequence_batching { control_input [ "
        + ", ".join([
            control("START", "CONTROL_SEQUENCE_START", "int32_false_true: [ 0, 1 ]"),
            control("END", "CONTROL_SEQUENCE_END", "int32_false_true: [ 0, 1 ]"),
            control("READY", "CONTROL_SEQUENCE_READY", "int32_false_true: [ 0, 1 ]"),
            control("CORRID", "CONTROL_SEQUENCE_CORRID", "data_type: TYPE_UINT64"),
        ]) + " ] }",
    )


@pytest.mark.parametrize("args", [
    ["--input-tensor-format", "json", "--output-tensor-format", "json"],
    ["--input-tensor-format", "binary"],
    ["-i", "grpc"],
    ["-i", "grpc", "--streaming"],
], ids=["http-json", "http-binary", "grpc", "grpc-streaming"])
def test_sequence_model_gets_whole_sequences(tmp_path, args):
    """Each connection sends whole sequences: the model sees every id start
    once, on its first request, and end on its last, after 2-6 requests."""
    repo = write_repository(tmp_path / "repo", [_sequence_model("perf_seq")], TARGET)
    with Server(repo) as s:
        url = s.grpc_url if "grpc" in args else s.url
        before = stats(s.url, "perf_seq")
        report, _ = run_report(
            tmp_path, "-m", "perf_seq", "-u", url, *args, "--concurrency-range", "3",
            "--sequence-length", "4", "--sequence-length-variation", "50",
            "--sequence-id-range", "100", *QUICK,
        )
        sent = report["totals"]["requests_sent"]
        assert _server_delta(s, "perf_seq", before, sent)[0] == sent
        _check_point(report["points"][0])
        refused = run_perf("-m", "perf_seq", "-u", s.url, "--request-rate-range", "10")
    _fails(refused, "'perf_seq' is a sequence model", "--concurrency-range")
    seen = {}
    lines = [tuple(map(int, l.split())) for l in (repo / "perf_seq" / "seen.log").read_text().splitlines()]
    for corrid, start, end in lines:
        seen.setdefault(corrid, []).append((start, end))
    assert len(lines) == sent and min(seen) >= 100
    complete = 0
    for corrid, steps in seen.items():
        assert steps[0][0] == 1 and all(st == 0 for st, _ in steps[1:]), (corrid, steps)
        assert all(e == 0 for _, e in steps[:-1]), (corrid, steps)
        if steps[-1][1] == 1:
            complete += 1
            assert 2 <= len(steps) <= 6, (corrid, steps)
    assert complete >= len(seen) - 3  # a connection's last sequence may be cut short


def test_grpc_unknown_model(server):
    _fails(run_perf("-m", "no_such_model", "-i", "grpc", "-u", server.grpc_url), "no_such_model", "gRPC status")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_system_shared_memory_inputs(server, tmp_path, protocol):
    """Inputs and outputs in registered POSIX shared memory: the server
    counts every request, and the regions are gone afterwards."""
    before = stats(server.url, STRINGS)
    url = server.grpc_url if protocol == "grpc" else server.url
    report, _ = run_report(
        tmp_path, "-m", STRINGS, "-i", protocol, "-u", url, "-b", 2, "--shared-memory", "system",
        "--output-shared-memory-size", 4096, *QUICK,
    )
    sent = report["totals"]["requests_sent"]
    assert _server_delta(server, STRINGS, before, sent, batch=2) == (sent, 2 * sent)
    _check_point(report["points"][0], batch=2)
    assert requests.get(f"http://{server.url}/v2/systemsharedmemory/status", timeout=10).json() == []
    assert not [p for p in Path("/dev/shm").iterdir() if p.name.startswith("oxiserve_perf_")]


def test_latency_bound_search_measures_both_ends(server, tmp_path):
    """With a bound no level can exceed, the search measures both ends (and
    nothing between) and reports the faster one as the best."""
    report, _ = run_report(
        tmp_path, "-m", NO_BATCH, "-u", server.url, "--concurrency-range", "1:4",
        "--binary-search", "--latency-threshold", 60000, *QUICK,
    )
    assert [p["load"] for p in report["points"]] == [1, 4]
    top = max(report["points"], key=lambda p: p["throughput"])
    assert report["best_load"] == top["load"]
    assert report["latency_threshold_ms"] == 60000


def test_html_report_renders_in_chromium(server, tmp_path):
    html = tmp_path / "report.html"
    report, _ = run_report(
        tmp_path, "-m", FP32, "-u", server.url, "--concurrency-range", "1:3", "--html", html, *QUICK,
    )
    text = html.read_text()
    assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    dom = dump_dom(html)
    assert 'id="throughput-plot"' in dom and 'id="latency-plot"' in dom
    # One throughput line, five latency lines (p50, p90, p95, p99, avg);
    # a marker per point on each.
    assert dom.count("<polyline") == 6
    assert dom.count('class="point"') == 6 * len(report["points"]) == 18
    assert dom.count("<tr>") >= 1 + len(report["points"])
    png = tmp_path / "perf_report.png"
    width, height, distinct = screenshot(html, png)
    print(f"HTML report screenshot: {png}")
    assert (width, height) == (1200, 900)
    assert distinct > 20, "the screenshot is blank"


def test_analyze_sweeps_configurations_and_restores_the_model(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity(FP32, "FP32", dims=(16,))], TARGET)
    with Server(repo, ["--model-control-mode=explicit", f"--load-model={FP32}"]) as s:
        config_url = f"http://{s.url}/v2/models/{FP32}/config"
        own = requests.get(config_url, timeout=10).json()
        html, csv = tmp_path / "analysis.html", tmp_path / "analysis.csv"
        analysis, done = run_report(
            tmp_path, "analyze", "-m", FP32, "-u", s.url, "--instance-counts", "1,2",
            "--max-batch-sizes", "4", "--concurrency-range", "1:2", "-l", 60000,
            "--html", html, "-f", csv, *QUICK,
        )
        restored = requests.get(config_url, timeout=10).json()
    tried = [(t["config"]["instance_count"], t["config"]["dynamic_batching"]) for t in analysis["trials"]]
    assert tried == [(1, False), (1, True), (2, False), (2, True)]
    for trial in analysis["trials"]:
        assert trial["server_config"] == trial["config"]
        assert trial["config"]["max_batch_size"] == 4
        totals = trial["report"]["totals"]
        assert totals["requests_sent"] == totals["server_requests"] > 0
        for point in trial["report"]["points"]:
            _check_point(point)
        assert trial["best"]["throughput"] == max(p["throughput"] for p in trial["report"]["points"])
    rates = [t["best"]["throughput"] for t in analysis["trials"]]
    assert analysis["best"] == rates.index(max(rates))
    assert "<- best" in done.stdout
    assert restored == own
    assert len(csv.read_text().splitlines()) == 1 + 4
    dom = dump_dom(html)
    assert dom.count("<polyline") == 2 * 4 and 'id="best"' in dom


def test_analyze_over_grpc(tmp_path):
    """The same sweep through the gRPC repository API (ModelConfig,
    RepositoryModelLoad with a config override), measured over gRPC."""
    repo = write_repository(tmp_path / "repo", [identity(FP32, "FP32", dims=(16,))], TARGET)
    with Server(repo, ["--model-control-mode=explicit", f"--load-model={FP32}"]) as s:
        config_url = f"http://{s.url}/v2/models/{FP32}/config"
        own = requests.get(config_url, timeout=10).json()
        analysis, _ = run_report(
            tmp_path, "analyze", "-m", FP32, "-i", "grpc", "-u", s.grpc_url,
            "--instance-counts", "1,2", "--max-batch-sizes", "2", "--dynamic-batching", "on",
            "--concurrency-range", "1", *QUICK,
        )
        restored = requests.get(config_url, timeout=10).json()
    assert [t["server_config"] for t in analysis["trials"]] == [
        {"instance_count": n, "max_batch_size": 2, "dynamic_batching": True} for n in (1, 2)]
    for trial in analysis["trials"]:
        assert trial["report"]["protocol"] == "grpc"
        totals = trial["report"]["totals"]
        assert totals["requests_sent"] == totals["server_requests"] > 0
    assert restored == own


def test_interrupted_analyze_restores_the_model(tmp_path):
    """Ctrl-C while a configuration is being measured: the model gets its
    own configuration back before the tool exits (non-zero)."""
    repo = write_repository(tmp_path / "repo", [identity(FP32, "FP32", dims=(16,))], TARGET)
    with Server(repo, ["--model-control-mode=explicit", f"--load-model={FP32}"]) as s:
        config_url = f"http://{s.url}/v2/models/{FP32}/config"
        own = requests.get(config_url, timeout=10).json()
        tool = subprocess.Popen(
            [str(perf_bin()), "analyze", "-m", FP32, "-u", s.url, "--instance-counts", "2",
             "--max-batch-sizes", "2", "--dynamic-batching", "on", "-p", "60000"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            wait_for(lambda: requests.get(config_url, timeout=10).json()["max_batch_size"] == 2,
                     what="the override to be loaded")
            tool.send_signal(signal.SIGINT)
            _, err = tool.communicate(timeout=60)
        finally:
            tool.kill()
        assert tool.returncode != 0 and "interrupted" in err, err
        assert requests.get(config_url, timeout=10).json() == own


def test_percentile_is_what_levels_are_judged_by(server, tmp_path):
    report, done = run_report(tmp_path, "-m", FP32, "-u", server.url, "--percentile", 95, *QUICK)
    point = report["points"][0]
    assert report["percentile"] == 95
    assert point["judged_latency_us"] == point["latency_us"]["p95"]
    assert f"latency {point['latency_us']['p95']} usec" in done.stdout


def test_latency_bound_stops_the_sweep(server, tmp_path):
    """A bound of 1 us: the first level is over it, so the sweep ends there
    and no level qualifies as the best."""
    report, done = run_report(
        tmp_path, "-m", FP32, "-u", server.url, "--concurrency-range", "1:3", "-l", 0.001, *QUICK,
    )
    assert [p["load"] for p in report["points"]] == [1]
    assert report["best_load"] is None
    assert "best within the latency bound" not in done.stdout


def _fails(done, *needles):
    assert done.returncode != 0, done.stdout
    for needle in needles:
        assert needle in done.stderr, done.stderr


FAILING_MODEL_PY = """\
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(error=pb_utils.TritonError("perf test failure"))
            for _ in requests
        ]
"""


def test_failed_requests_are_counted_and_fail_the_run(start_server, tmp_path):
    spec = ModelSpec(
        "perf_failing", [Tensor("INPUT0", "FP32", [4])], python_only=True,
        files={"1/model.py": FAILING_MODEL_PY},
    )
    s = start_server([spec])
    before = stats(s.url, "perf_failing")
    out = tmp_path / "report.json"
    done = run_perf("-m", "perf_failing", "-u", s.url, "--json", out, *QUICK)
    _fails(done, "requests failed", "perf test failure")
    report = json.loads(out.read_text())
    point = report["points"][0]
    assert point["errors"] > 0 and point["measured_requests"] == 0
    assert "perf test failure" in point["first_error"]
    sent = report["totals"]["requests_sent"]
    assert _server_delta(s, "perf_failing", before, sent, batch=0)[0] == sent == report["totals"]["server_requests"]


def test_unknown_model(server):
    _fails(run_perf("-m", "no_such_model", "-u", server.url), "no_such_model")


def test_unreachable_server(unused_port):
    _fails(run_perf("-m", FP32, "-u", f"127.0.0.1:{unused_port}"), "cannot connect", str(unused_port))


def test_url_needs_a_port():
    _fails(run_perf("-m", FP32, "-u", "localhost"), "host:port")


@pytest.fixture
def unused_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args, needles", [
    (["--shape", "INPUT0"], ["NAME:d1"]),
    (["--shape", "INPUT0:2,x"], ["'x'"]),
    (["--shape", "NOPE:3"], ["'NOPE'", "INPUT0"]),
    (["--shape", "INPUT0:3,3"], ["does not fit"]),
    (["--concurrency-range", "4:2"], ["below start"]),
    (["--worker-threads", "0"], ["--worker-threads", "'0'"]),
    (["-b", "9"], ["max_batch_size 8"]),
    (["--input-data", "/no/such/file.json"], ["/no/such/file.json"]),
])
def test_bad_arguments(server, args, needles):
    model = VARIABLE if "--shape" in args else FP32
    _fails(run_perf("-m", model, "-u", server.url, *args), *needles)


def test_bad_base64_in_data_file(server, tmp_path):
    data = tmp_path / "data.json"
    data.write_text(json.dumps({"data": [{"INPUT0": {"b64": "AAAA%"}}]}))
    _fails(run_perf("-m", FP32, "-u", server.url, "--input-data", data),
           str(data), "entry 0, input 'INPUT0'", "not valid base64")


def test_variable_dims_need_a_shape(server):
    _fails(run_perf("-m", VARIABLE, "-u", server.url), "INPUT0", "--shape")
