"""Graceful shutdown on SIGTERM / SIGINT: the server stops accepting
connections, requests in flight complete, models unload (Python models run
`finalize`), and it exits 0; past --exit-timeout-secs it exits 1 at once."""

import signal
import socket
import threading
import time

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import raw_infer_request, read_response, wait_for
from python_models import PyModel, config, write_repo
from servers import Server, accepts

# Sleeps as many milliseconds as its input says; finalize leaves a marker.
SLEEPER_PY = '''\
import os
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.marker = os.path.join(args["model_repository"], "finalized")

    def execute(self, requests):
        responses = []
        for request in requests:
            ms = pb_utils.get_input_tensor_by_name(request, "MS").as_numpy()
            time.sleep(int(ms[0]) / 1000)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUT", ms)]))
        return responses

    def finalize(self):
        with open(self.marker, "w") as f:
            f.write("finalized")
'''


def _sleeper():
    return PyModel("sleeper", SLEEPER_PY, config([("MS", "INT32", [1])], [("OUT", "INT32", [1])],
                                                 count=2))


def _sleep(url, ms, results):
    client = httpclient.InferenceServerClient(url, network_timeout=120)
    tensor = httpclient.InferInput("MS", [1], "INT32")
    tensor.set_data_from_numpy(np.array([ms], dtype=np.int32))
    try:
        results.append(client.infer("sleeper", [tensor]).as_numpy("OUT").tolist())
    except Exception as e:  # noqa: BLE001 - the test looks at what happened
        results.append(e)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_in_flight_requests_complete(tmp_path, sig):
    repo = write_repo(tmp_path / "repo", [_sleeper()])
    server = Server(repo)
    results = []
    clients = [threading.Thread(target=_sleep, args=(server.url, 1500, results)) for _ in range(2)]
    for client in clients:
        client.start()
    time.sleep(0.5)  # both requests are executing (two instances)
    server.proc.send_signal(sig)
    wait_for(lambda: not accepts(server.port), timeout=10, what="the port to close")
    for client in clients:
        client.join(30)
    assert results == [[1500], [1500]], results
    assert server.proc.wait(timeout=30) == 0
    server.stop()
    assert (repo / "sleeper" / "finalized").read_text() == "finalized"
    assert f"Signal ({int(sig)}) received." in server.output()


def test_exit_timeout_cuts_the_wait(tmp_path):
    repo = write_repo(tmp_path / "repo", [_sleeper()])
    server = Server(repo, ["--exit-timeout-secs=1"])
    results = []
    client = threading.Thread(target=_sleep, args=(server.url, 60_000, results))
    client.start()
    time.sleep(0.5)
    server.proc.send_signal(signal.SIGTERM)
    status = server.proc.wait(timeout=30)  # not the request's 60 s
    server.stop()
    client.join(30)
    assert status == 1, server.output()
    assert "Exit timeout expired" in server.output()
    assert isinstance(results[0], Exception), results


def _request(port, ms):
    body = {"inputs": [{"name": "MS", "shape": [1], "datatype": "INT32", "data": [ms]}]}
    return raw_infer_request(port, "sleeper", body)


def test_requests_sent_on_keep_alive_connections_after_the_signal_are_answered(tmp_path):
    """Requests a client writes on its open keep-alive connections as the
    signal arrives are answered (with `Connection: close`), not dropped;
    then the connections close."""
    repo = write_repo(tmp_path / "repo", [_sleeper()])
    server = Server(repo)
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(8)]
    busy = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    for sock in idle:
        sock.sendall(_request(server.port, 0))
        assert read_response(sock)[0] == "HTTP/1.1 200 OK"
    busy.sendall(_request(server.port, 800))  # executing while the signal comes
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.1)  # the server is draining when the requests come
    for sock in idle:
        sock.sendall(_request(server.port, 10))
    for status, _, body in [read_response(sock) for sock in [busy, *idle]]:
        assert status == "HTTP/1.1 200 OK", (status, body)
    for sock in [busy, *idle]:
        assert sock.recv(1) == b"", "the connection closes after its answer"
        sock.close()
    wait_for(lambda: not accepts(server.port), timeout=10, what="the port to close")
    assert server.proc.wait(timeout=30) == 0
    server.stop()
