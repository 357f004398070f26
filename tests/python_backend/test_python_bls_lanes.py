"""BLS calls that take a lane (docs/design/python-backend.md §7.2): after one call of a
shape went through the server, oxiserve sends the calling process's later calls of that
shape straight to the called model's process. What a model sees must not change: the
answers, the error texts, the called model's statistics, a called process that dies in
the middle of a call, and calls of another shape (validated by the server)."""

import contextlib
import json
import socket
import struct
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [
        PyModel("lane_caller", model_source("lane_caller"),
                config([("CALLS", "BYTES", [1])], [("RESULT", "BYTES", [1])])),
        # No batcher: the kind of model whose calls may take a lane.
        PyModel("lane_callee", model_source("lane_callee"),
                config([("IN", "FP32", [-1])], [("OUT", "FP32", [-1])])),
    ]
    with serve(tmp_path_factory.mktemp("py_bls_lanes"), models) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    """An HTTP client of the module's server."""
    with contextlib.closing(httpclient.InferenceServerClient(server.url)) as c:
        yield c


def calls(client, *specs):
    """Runs the BLS calls `specs` ((values, numpy datatype) pairs) in one request of
    lane_caller; their results, in order."""
    tensor = httpclient.InferInput("CALLS", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([json.dumps(specs).encode()], dtype=np.object_))
    result = client.infer("lane_caller", [tensor])
    return json.loads(result.as_numpy("RESULT")[0])


def callee_stats(client):
    return client.get_inference_statistics("lane_callee")["model_stats"][0]


def settled_stats(client):
    """lane_callee's statistics once the executions reported late are in: two reads
    0.3 s apart that agree."""
    stats = callee_stats(client)
    while True:
        time.sleep(0.3)
        again = callee_stats(client)
        if again == stats:
            return stats
        stats = again


def stats_after(client, count, deadline_s=10):
    """lane_callee's statistics once they count `count` inferences (the called process
    reports the executions of its lane in batches, soon after it goes idle)."""
    deadline = time.monotonic() + deadline_s
    while True:
        stats = callee_stats(client)
        if int(stats.get("inference_count", 0)) >= count or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)


def test_repeated_calls_are_answered_and_counted(client):
    before = int(settled_stats(client).get("inference_count", 0))
    specs = [([float(i), i + 0.5], "float32") for i in range(100, 140)]
    results = calls(client, *specs)
    assert results == [{"OUT": [2.0 * i, 2 * i + 1.0]} for i in range(100, 140)]
    stats = stats_after(client, before + 40)
    assert int(stats["inference_count"]) == before + 40
    assert int(stats["execution_count"]) == before + 40
    assert int(stats["inference_stats"]["success"]["count"]) == before + 40


@pytest.mark.oxiserve_only
def test_calls_after_the_first_skip_the_scheduler(client):
    """Only the first call of a shape waits in the server's queue: the others take the
    lane, so the queue time stays what the first one added."""
    calls(client, ([1.0, 2.0, 3.0], "float32"))
    first = settled_stats(client)
    count = int(first["inference_count"])
    results = calls(client, *[([1.0, 2.0, float(i)], "float32") for i in range(20)])
    assert results[-1] == {"OUT": [2.0, 4.0, 38.0]}
    stats = stats_after(client, count + 20)
    assert int(stats["inference_count"]) == count + 20
    assert stats["inference_stats"]["queue"]["count"] == first["inference_stats"]["queue"][
        "count"] + 20
    assert stats["inference_stats"]["queue"]["ns"] == first["inference_stats"]["queue"]["ns"]
    assert int(stats["inference_stats"]["compute_infer"]["ns"]) > int(
        first["inference_stats"]["compute_infer"]["ns"])


def test_errors_read_the_same_through_the_lane(client):
    before = settled_stats(client)
    # The first call of this shape fails (no lane is offered after a failure), the
    # second succeeds, the third fails again, through the lane on oxiserve.
    through_server, ok, through_lane = calls(
        client, ([13.0, 0.0, 0.0, 0.0], "float32"), ([1.0, 0.0, 0.0, 0.0], "float32"),
        ([13.0, 0.0, 0.0, 0.0], "float32"))
    assert ok == {"OUT": [2.0, 0.0, 0.0, 0.0]}
    assert "thirteen is refused" in through_server["error"]
    assert through_lane == through_server
    failed = int(before["inference_stats"]["fail"]["count"]) + 2
    deadline = time.monotonic() + 10
    while int(callee_stats(client)["inference_stats"]["fail"]["count"]) < failed:
        assert time.monotonic() < deadline, "the failed calls were not counted"
        time.sleep(0.05)


def test_a_large_answer_to_a_small_call(client):
    """A call through a lane may get an answer far larger than the socket holds."""
    small, large, again = calls(client, ([1.0, 2.0], "float32"), ([4096.0, 3.0], "float32"),
                                ([4096.0, 3.0], "float32"))
    assert small == {"OUT": [2.0, 4.0]}
    assert large == again == {"OUT size": 3_000_000, "OUT values": [6.0]}


def test_a_call_of_another_shape_is_validated_by_the_server(client):
    bad = ([1, 2], "int32")
    first_bad, ok, bad_after = calls(client, bad, ([1.0, 2.0], "float32"), bad)
    assert ok == {"OUT": [2.0, 4.0]}
    assert "error" in first_bad and "INT32" in first_bad["error"]
    assert bad_after == first_bad


@pytest.mark.oxiserve_only
def test_a_callee_that_dies_mid_call_is_an_error_and_comes_back(client):
    ok, died = calls(client, ([5.0], "float32"), ([-1.0], "float32"))
    assert ok == {"OUT": [10.0]}
    assert "lane_callee_0_0" in died["error"] and "is not healthy" in died["error"]
    # The server restarts the instance for the next call; calls take its new lane.
    deadline = time.monotonic() + 60
    while True:
        again = calls(client, ([7.0], "float32"), ([8.0], "float32"), ([9.0], "float32"))
        if "error" not in again[0] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert again == [{"OUT": [14.0]}, {"OUT": [16.0]}, {"OUT": [18.0]}]


@pytest.mark.oxiserve_only
def test_a_caller_that_breaks_the_lane_protocol_is_cut_off_alone(server, client):
    """A lane accepts any process of the server's user: one that sends garbage loses its
    connection, the model keeps serving its other callers."""
    calls(client, ([3.0, 4.0], "float32"))  # the callee's lane is up and in use
    lanes = sorted(Path(tempfile.gettempdir()).glob(f"oxiserve-{server.proc.pid}-*/*.lane"))
    assert lanes, "no lane sockets for this server"
    assert all(p.parent.stat().st_mode & 0o777 == 0o700 for p in lanes)
    unknown_kind = b"\x10\x00\x00\x00" + b"\xff" * 16
    # an Execute frame whose body says it holds 200 bytes of request, and holds 4
    bad_call = struct.pack("<IIQI", 20, 2, 1, 200) + b"\x00" * 4
    for path in lanes:
        for garbage in (unknown_kind, bad_call):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(path))
                sock.sendall(garbage)
                sock.settimeout(10)
                assert sock.recv(16) == b"", "the lane should close a caller that breaks it"
    assert calls(client, ([3.0, 4.0], "float32"), ([5.0, 6.0], "float32")) == [
        {"OUT": [6.0, 8.0]}, {"OUT": [10.0, 12.0]}]
