"""Shutting down on SIGINT/SIGTERM, as Triton 2.51 does: the requests already
accepted finish, new inference requests are refused with Triton's words
while the endpoints still answer, the log says how many inferences are in
flight, and the server then exits cleanly."""

import http.client
import json
import signal
import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from helpers import wait_for
from models import identity, write_repository
from servers import TARGET, Server

STOPPING = ("Server is stopping, scheduler for model has stopped accepting new "
            "inference requests")

# Takes a second per execution, one request at a time. (Triton counts the
# requests in flight in a dynamic batcher's queue, not the default
# scheduler's: without one, it unloads the model at once.)
SLOW = identity("slow", "FP32", dims=(1,), max_batch_size=1, execute_delay_ms=1000,
                python_only=True, extra_config="dynamic_batching { }")

ENSEMBLE = """name: "ens"
platform: "ensemble"
max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
ensemble_scheduling { step [ { model_name: "slow" model_version: -1
  input_map { key: "INPUT0" value: "INPUT0" }
  output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }
"""


@pytest.fixture
def server(tmp_path):
    repo = write_repository(tmp_path / "repo", [SLOW], TARGET)
    (repo / "ens" / "1").mkdir(parents=True)
    (repo / "ens" / "config.pbtxt").write_text(ENSEMBLE)
    with Server(repo, ["--exit-timeout-secs=30"]) as server:
        yield server


def _inputs(value):
    tensor = grpcclient.InferInput("INPUT0", [1, 1], "FP32")
    tensor.set_data_from_numpy(np.array([[value]], dtype=np.float32))
    return [tensor]


def _send_async(client, model, values):
    """Sends one request per value; returns the list their results land in."""
    results = []
    for value in values:
        client.async_infer(model, _inputs(value),
                           lambda result, error: results.append(error or result))
    return results


def _exit_status(server, timeout=60):
    server.proc.wait(timeout=timeout)
    server._drainer.join(5)  # the last lines
    return server.proc.returncode


def test_accepted_requests_finish_and_new_ones_are_refused(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    results = _send_async(client, "slow", values)
    # The first executes while the others wait. (Triton counts only those
    # its batcher holds, not the next batch it already formed: six requests
    # leave some there, as in its own shutdown test.)
    wait_for(lambda: len(results) == 0 and _pending(server) >= 5,
             what="five requests queued behind the first")
    server.proc.send_signal(signal.SIGINT)
    wait_for(lambda: "Waiting for in-flight requests to complete." in server.output(),
             what="the server to begin stopping")

    with pytest.raises(InferenceServerException) as refused:
        client.infer("slow", _inputs(9.0))
    assert STOPPING in refused.value.message()
    # An ensemble refuses new requests in its own name.
    with pytest.raises(InferenceServerException) as refused:
        client.infer("ens", _inputs(9.0))
    assert "in ensemble 'ens'" in refused.value.message()
    assert STOPPING in refused.value.message()

    wait_for(lambda: len(results) == len(values), what="the accepted requests to finish")
    assert sorted(r.as_numpy("OUTPUT0")[0][0] for r in results) == values, results
    client.close()
    assert _exit_status(server) == 0
    log = server.output()
    assert "model versions that have in-flight inferences" in log
    assert "Model 'slow' (version 1) has " in log
    assert "All models are stopped, unloading models" in log


def _pending(server):
    """The pending request count the metrics endpoint reports for `slow`."""
    if server.metrics_port is None:  # its "Started" line may come a moment later
        return 0
    conn = http.client.HTTPConnection("127.0.0.1", server.metrics_port, timeout=5)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    for line in text.splitlines():
        if line.startswith("nv_inference_pending_request_count{") and 'model="slow"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0


def test_an_open_http_connection_keeps_working(server):
    """As Triton: on the signal the HTTP endpoint takes no new connection but
    serves the open ones as before, and the accepted requests finish. (Ours
    closes each connection after that answer; Triton waits, up to the exit
    timeout, for the client to close it.)"""
    open_conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    open_conn.request("GET", "/v2")
    assert open_conn.getresponse().read()

    done = []
    body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 1],
                                   "data": [4.0]}]})

    def slow_request():
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("POST", "/v2/models/slow/infer", body)
        response = conn.getresponse()
        done.append((response.status, json.loads(response.read())))
        conn.close()

    threads = [threading.Thread(target=slow_request) for _ in range(3)]
    for thread in threads:
        thread.start()
    wait_for(lambda: _pending(server) >= 2, what="two requests queued")
    server.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "Signal (15) received." in server.output(), what="the signal")

    open_conn.request("POST", "/v2/models/slow/infer", body)
    response = open_conn.getresponse()
    assert response.status == 200
    assert json.loads(response.read())["outputs"][0]["data"] == [4.0]
    open_conn.close()

    for thread in threads:
        thread.join(30)
    assert [status for status, _ in done] == [200, 200, 200], done
    assert all(answer["outputs"][0]["data"] == [4.0] for _, answer in done), done
    assert _exit_status(server) == 0


def test_started_sequences_go_on_and_new_ones_are_refused(tmp_path):
    # Two slots: both sequences hold one.
    seq = identity("seq", "FP32", dims=(1,), max_batch_size=2, python_only=True,
                   extra_config="sequence_batching { max_sequence_idle_microseconds: 60000000 }")
    repo = write_repository(tmp_path / "repo", [seq], TARGET)
    with Server(repo, ["--exit-timeout-secs=30"]) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        for sequence_id in (1, 2):
            client.infer("seq", _inputs(1.0), sequence_id=sequence_id, sequence_start=True)
        server.proc.send_signal(signal.SIGINT)
        wait_for(lambda: "Model 'seq' (version 1) has 2 in-flight inferences" in server.output(),
                 what="the two sequences counted in flight")

        # A new sequence, or a new start of a sequence in progress, is refused.
        for sequence_id in (3, 1):
            with pytest.raises(InferenceServerException) as refused:
                client.infer("seq", _inputs(2.0), sequence_id=sequence_id, sequence_start=True)
            assert STOPPING in refused.value.message()
        # The sequences in progress go on to their end.
        for sequence_id in (2, 1):
            result = client.infer("seq", _inputs(3.0), sequence_id=sequence_id,
                                  sequence_end=True)
            assert result.as_numpy("OUTPUT0")[0][0] == 3.0
        client.close()
        assert _exit_status(server) == 0
