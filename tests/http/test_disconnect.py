"""A request whose client hangs up before it runs is never executed: queued
work is dropped when its HTTP connection closes (Triton keeps running it,
its issue #8982)."""

import socket
import threading
import time

import grpc
import numpy as np
import pytest
from tritonclient.grpc import service_pb2

from grpc_helpers import Stub
from helpers import Http, raw_infer_request, wait_for
from models import Tensor, ModelSpec, write_repository
from servers import TARGET, Server

DELAY_MS = 400


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory):
    spec = ModelSpec(
        "slow", [Tensor("INPUT0", "INT32", [-1])], max_batch_size=0, execute_delay_ms=DELAY_MS
    )
    repo = write_repository(tmp_path_factory.mktemp("slow"), [spec], TARGET)
    with Server(repo) as server:
        yield server


def _request_bytes(port):
    body = {"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "INT32", "data": [1, 2]}]}
    return raw_infer_request(port, "slow", body)


def _stats(http):
    resp = http.get("/v2/models/slow/stats")
    assert resp.status_code == 200, resp.text
    return resp.json()["model_stats"][0]


@pytest.mark.oxiserve_only
def test_requests_of_gone_clients_are_not_executed(slow_server):
    port = slow_server.port
    with Http(slow_server.url) as http:
        before = _stats(http)["execution_count"]
        first = {}

        def occupy():
            with Http(slow_server.url) as own:
                first["resp"] = own.infer("slow", {
                    "inputs": [{"name": "INPUT0", "shape": [1], "datatype": "INT32", "data": [7]}]
                })

        # One request occupies the only instance for DELAY_MS...
        runner = threading.Thread(target=occupy)
        runner.start()
        time.sleep(0.1)
        # ...while five more queue behind it and their clients hang up.
        gone = []
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(_request_bytes(port))
            gone.append(s)
        time.sleep(0.05)
        for s in gone:
            s.close()
        runner.join(timeout=30)
        assert first["resp"].status_code == 200, first["resp"].text
        # A request from a live client after them still runs.
        resp = http.infer("slow", {
            "inputs": [{"name": "INPUT0", "shape": [1], "datatype": "INT32", "data": [8]}]
        })
        assert resp.status_code == 200, resp.text
        stats = wait_for(
            lambda: (s := _stats(http))["inference_stats"]["success"]["count"] >= 2 and s,
            what="both live requests counted",
        )
        assert stats["execution_count"] - before == 2, stats
        assert stats["inference_stats"]["fail"]["count"] == 5, stats


@pytest.mark.oxiserve_only
def test_grpc_calls_cancelled_by_their_clients_are_not_executed(slow_server):
    """The same over gRPC: calls whose deadline passes while they wait in
    the queue are cancelled by the client and never run."""
    stub = Stub(slow_server.grpc_url)
    with Http(slow_server.url) as http:
        before = _stats(http)
        request = service_pb2.ModelInferRequest(model_name="slow")
        request.inputs.add(name="INPUT0", datatype="INT32", shape=[1])
        request.raw_input_contents.append(np.array([7], dtype=np.int32).tobytes())
        occupying = stub.ModelInfer.future(request, timeout=30)
        time.sleep(0.1)
        gone = [stub.ModelInfer.future(request, timeout=0.1) for _ in range(5)]
        for call in gone:
            with pytest.raises(grpc.RpcError) as cancelled:
                call.result()
            # The client's deadline, or the server's own cancellation at the
            # deadline it was sent (tonic: CANCELLED "Timeout expired").
            assert cancelled.value.code() in (
                grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED
            ), cancelled.value
        occupying.result()
        stub.ModelInfer(request, timeout=30)
        stats = wait_for(
            lambda: (s := _stats(http))["execution_count"] - before["execution_count"] >= 2 and s,
            what="both live calls executed",
        )
        time.sleep(DELAY_MS / 1000 * 2)  # time for a wrongly kept call to run
        stats = _stats(http)
    stub.close()
    assert stats["execution_count"] - before["execution_count"] == 2, stats


@pytest.mark.oxiserve_only
@pytest.mark.parametrize("phase", ["headers", "body", "executing"])
def test_a_client_gone_in_any_phase_costs_nothing(slow_server, phase):
    """A client that hangs up while sending its headers, its body, or while
    its request executes leaves the server serving, with statistics that add
    up: the executing one runs (it had started), the others never exist."""
    port = slow_server.port
    request = _request_bytes(port)
    head_end = request.index(b"\r\n\r\n") + 4
    with Http(slow_server.url) as http:
        before = _stats(http)
        s = socket.create_connection(("127.0.0.1", port))
        if phase == "headers":
            s.sendall(request[: head_end // 2])
        elif phase == "body":
            s.sendall(request[: head_end + 5])
        else:
            s.sendall(request)
            time.sleep(0.1)  # it is executing now
        s.close()
        resp = http.infer("slow", {
            "inputs": [{"name": "INPUT0", "shape": [1], "datatype": "INT32", "data": [8]}]
        })
        assert resp.status_code == 200, resp.text
        executed = 2 if phase == "executing" else 1
        stats = wait_for(
            lambda: (s := _stats(http))["execution_count"] - before["execution_count"] >= executed
            and s,
            what="the executions counted",
        )
        assert stats["execution_count"] - before["execution_count"] == executed, stats
