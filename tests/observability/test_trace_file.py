"""Triton mode tracing: the trace file (a JSON array of records per trace
id), sampling by rate and count, log-frequency's numbered files, TENSORS,
per-model settings, the deprecated flags, and bad --trace-config values."""

import pytest

from helpers import Http, wait_for
from python_models import serve, write_repo
from servers import run_to_exit
from tracing import (
    CORE_CHAIN,
    GRPC_STAMPS,
    HTTP_STAMPS,
    assert_in_order,
    infer_grpc,
    infer_http,
    models,
    read_entries,
    traces,
)


def flags(path, *more):
    return [f"--trace-config=triton,file={path}", *more]


def timestamps_on(path, *more):
    return flags(path, "--trace-config=level=TIMESTAMPS", "--trace-config=rate=1", *more)


def test_http_and_grpc_requests(tmp_path):
    path = tmp_path / "trace.json"
    with serve(tmp_path / "repo", models(), timestamps_on(path)) as server:
        infer_http(server, request_id="req-a")
        infer_grpc(server)
    # Without log-frequency, the file is written when the server stops.
    found = traces(read_entries(path))
    assert len(found) == 2, found
    http_trace, grpc_trace = (found[i] for i in sorted(found))
    assert http_trace["model"] == {"id": min(found), "model_name": "simple",
                                   "model_version": 1, "request_id": "req-a"}
    assert grpc_trace["model"] == {"id": max(found), "model_name": "simple",
                                   "model_version": 1}
    assert set(http_trace["timestamps"]) == set(CORE_CHAIN) | {"REQUEST_END"} | HTTP_STAMPS
    assert set(grpc_trace["timestamps"]) == set(CORE_CHAIN) | {"REQUEST_END"} | GRPC_STAMPS
    assert_in_order(http_trace["timestamps"], ["HTTP_RECV_START", "HTTP_RECV_END", *CORE_CHAIN])
    assert_in_order(http_trace["timestamps"], ["COMPUTE_END", "REQUEST_END"])
    assert_in_order(http_trace["timestamps"], ["HTTP_SEND_START", "HTTP_SEND_END"])
    assert_in_order(grpc_trace["timestamps"], CORE_CHAIN)
    assert_in_order(grpc_trace["timestamps"], ["GRPC_WAITREAD_START", "GRPC_WAITREAD_END"])
    # The model record comes right before REQUEST_START.
    entries = read_entries(path)
    at = next(i for i, e in enumerate(entries) if e.get("model_name"))
    assert entries[at + 1]["timestamps"][0]["name"] == "REQUEST_START"


def test_ensemble_steps_are_child_traces(tmp_path):
    path = tmp_path / "trace.json"
    with serve(tmp_path / "repo", models(), timestamps_on(path)) as server:
        infer_http(server, "ens")
    found = traces(read_entries(path))
    assert len(found) == 2, found
    ensemble, step = (found[i] for i in sorted(found))
    assert ensemble["model"]["model_name"] == "ens"
    assert "parent_id" not in ensemble["model"]
    assert step["model"]["model_name"] == "simple"
    assert step["model"]["parent_id"] == ensemble["model"]["id"]
    # The ensemble queues and ends; its step computes.
    assert set(ensemble["timestamps"]) == {"REQUEST_START", "QUEUE_START", "REQUEST_END"} | HTTP_STAMPS
    assert set(step["timestamps"]) == set(CORE_CHAIN) | {"REQUEST_END"}
    assert_in_order(
        {**ensemble["timestamps"], **{f"step_{k}": v for k, v in step["timestamps"].items()}},
        ["REQUEST_START", "QUEUE_START", "step_REQUEST_START", "step_COMPUTE_END",
         "step_REQUEST_END"],
    )


def test_bls_calls_are_child_traces(tmp_path):
    """A Python model's call with trace=request.trace() joins its request's trace."""
    path = tmp_path / "trace.json"
    with serve(tmp_path / "repo", models(bls=True), timestamps_on(path)) as server:
        infer_http(server, "bls")
    found = traces(read_entries(path))
    assert len(found) == 2, found
    bls, call = (found[i] for i in sorted(found))
    assert bls["model"]["model_name"] == "bls"
    assert call["model"]["model_name"] == "simple"
    assert call["model"]["parent_id"] == bls["model"]["id"]
    assert set(call["timestamps"]) == set(CORE_CHAIN) | {"REQUEST_END"}
    assert_in_order(
        {**bls["timestamps"], **{f"call_{k}": v for k, v in call["timestamps"].items()}},
        ["COMPUTE_START", "call_REQUEST_START", "call_QUEUE_START", "call_COMPUTE_START"],
    )


def test_log_frequency_writes_numbered_files(tmp_path):
    path = tmp_path / "trace.json"
    more = ["--trace-config=triton,log-frequency=2"]
    with serve(tmp_path / "repo", models(), timestamps_on(path, *more)) as server:
        for _ in range(5):
            infer_http(server)
        # Every second trace writes the file <path>.<n> with the two.
        second = tmp_path / "trace.json.1"
        wait_for(lambda: second.exists() and second.read_text().endswith("]"), what=second)
        assert len(traces(read_entries(tmp_path / "trace.json.0"))) == 2
        assert len(traces(read_entries(second))) == 2
    # At exit, the traces left go to the next one.
    assert len(traces(read_entries(tmp_path / "trace.json.2"))) == 1
    assert not path.exists()


def test_rate_and_count(tmp_path):
    """One request in 2 is traced, 2 traces in all; the count left is reported."""
    path = tmp_path / "trace.json"
    more = ["--trace-config=level=TIMESTAMPS", "--trace-config=rate=2",
            "--trace-config=count=2"]
    with serve(tmp_path / "repo", models(), flags(path, *more)) as server:
        for _ in range(7):
            infer_http(server)
        with Http(server.url) as http:
            assert http.get("/v2/trace/setting").json()["trace_count"] == "0"
    assert len(traces(read_entries(path))) == 2


def test_used_up_count_writes_a_numbered_file(tmp_path):
    """Rate 1: once the count is used up and its traces are done, Triton
    writes them to <file>.0 at once."""
    path = tmp_path / "trace.json"
    more = ["--trace-config=count=2"]
    with serve(tmp_path / "repo", models(), timestamps_on(path, *more)) as server:
        for _ in range(3):
            infer_http(server)
        first = tmp_path / "trace.json.0"
        wait_for(lambda: first.exists() and first.read_text().endswith("]"), what=first)
        assert len(traces(read_entries(first))) == 2


def test_tensors(tmp_path):
    path = tmp_path / "trace.json"
    more = ["--trace-config=level=TENSORS"]
    with serve(tmp_path / "repo", models(), timestamps_on(path, *more)) as server:
        infer_http(server)
    (trace,) = traces(read_entries(path)).values()
    tensors = {t["activity"]: t["tensor"] for t in trace["tensors"]}
    assert tensors["TENSOR_QUEUE_INPUT"] == {
        "name": "INPUT0", "data": "1,2,3", "shape": "1,3", "dtype": "INT32"}
    assert tensors["TENSOR_BACKEND_OUTPUT"] == {
        "name": "OUTPUT0", "data": "1,2,3", "shape": "1,3", "dtype": "INT32"}
    assert "REQUEST_START" in trace["timestamps"]


def test_tensors_without_timestamps(tmp_path):
    """Level TENSORS alone: tensor records only (Triton writes no model record then)."""
    path = tmp_path / "trace.json"
    more = ["--trace-config=level=TENSORS", "--trace-config=rate=1"]
    with serve(tmp_path / "repo", models(), flags(path, *more)) as server:
        infer_http(server)
    (trace,) = traces(read_entries(path)).values()
    assert trace["timestamps"] == {} and trace["model"] is None
    assert len(trace["tensors"]) == 2


def test_a_model_setting_traces_that_model_only(tmp_path):
    path = tmp_path / "trace.json"
    with serve(tmp_path / "repo", models(), flags(path)) as server:
        with Http(server.url) as http:
            on = {"trace_level": ["TIMESTAMPS"], "trace_rate": "1"}
            reply = http.post("/v2/models/other/trace/setting", on).json()
            assert reply["trace_level"] == ["TIMESTAMPS"], reply
        infer_http(server, "simple")
        infer_http(server, "other")
        infer_grpc(server, "other")
    found = traces(read_entries(path))
    assert [t["model"]["model_name"] for t in found.values()] == ["other", "other"]


def test_deprecated_flags(tmp_path):
    path = tmp_path / "trace.json"
    deprecated = [f"--trace-file={path}", "--trace-level=TIMESTAMPS", "--trace-level=TENSORS",
                  "--trace-rate=1", "--trace-count=5", "--trace-log-frequency=0"]
    with serve(tmp_path / "repo", models(), deprecated) as server:
        with Http(server.url) as http:
            assert http.get("/v2/trace/setting").json() == {
                "trace_level": ["TIMESTAMPS", "TENSORS"], "trace_rate": "1", "trace_count": "5",
                "log_frequency": "0", "trace_file": str(path), "trace_mode": "triton"}
        infer_http(server)
    assert len(traces(read_entries(path))) == 1


def test_trace_config_overrides_deprecated_flags_and_echoes_its_settings(tmp_path):
    path = tmp_path / "trace.json"
    given = [f"--trace-file={tmp_path / 'old.json'}", "--trace-rate=3",
             f"--trace-config=triton,file={path}", "--trace-config=rate=7",
             "--trace-config=triton,custom=1"]
    with serve(tmp_path / "repo", models(), given) as server:
        with Http(server.url) as http:
            assert http.get("/v2/trace/setting").json() == {
                "trace_level": ["OFF"], "trace_rate": "7", "trace_count": "-1",
                "log_frequency": "0", "trace_file": str(path), "trace_mode": "triton",
                "custom": "1"}


@pytest.mark.parametrize(
    "flag,needle",
    [
        ("--trace-config=rate=abc", "abc"),
        ("--trace-config=count=x", "x"),
        ("--trace-config=level=BOGUS", "bogus"),
        ("--trace-config=mode=bogus", "bogus"),
        ("--trace-config=foo,rate=1", "foo"),
        ("--trace-config=rate", "rate"),
        ("--trace-config=triton,log-frequency=often", "often"),
    ],
    ids=["rate", "count", "level", "mode", "unknown_mode", "no_value", "log_frequency"],
)
def test_bad_trace_config_stops_start_up(tmp_path, flag, needle):
    repo = write_repo(tmp_path / "repo", models())
    status, output = run_to_exit(repo, [flag])
    assert status not in (0, None), output
    assert "--trace-config" in output, output
    assert needle in output.lower(), output
