"""Limits of the HTTP endpoint against slow or greedy clients: a client
must send its headers within --http-header-timeout-secs and keep its body
coming within --http-body-timeout-secs; many clients trickling headers do
not stop a normal one; --http-max-connections caps the connections served
at once (more wait to be accepted)."""

import json
import socket

import pytest

from helpers import Http, expect_error, expect_still_serving
from models import identity, write_repository
from servers import TARGET, Server

pytestmark = pytest.mark.oxiserve_only


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = write_repository(
        tmp_path_factory.mktemp("limits"), [identity("id_int32", "INT32")], TARGET
    )
    flags = ["--http-header-timeout-secs=1", "--http-body-timeout-secs=1"]
    with Server(repo, flags) as server:
        yield server


def _connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _read_all(sock):
    """Everything the server sends until it closes the connection."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_client_slow_to_send_headers_is_disconnected(server):
    with _connect(server.port) as sock:
        sock.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n")
        # Never finishes its headers: the server closes after the timeout
        # (the socket's own 10 s timeout would raise instead).
        assert b"200 OK" not in _read_all(sock)


def test_a_stalled_body_fails_the_request(server):
    with _connect(server.port) as sock:
        sock.sendall(
            b"POST /v2/models/id_int32/infer HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"inputs\": ["
        )
        answer = _read_all(sock).decode("utf-8", "replace")
    assert answer.startswith("HTTP/1.1 400"), answer
    assert "--http-body-timeout-secs" in answer, answer


def test_trickling_clients_do_not_stop_a_normal_one(server):
    trickling = [_connect(server.port) for _ in range(300)]
    try:
        for sock in trickling:
            sock.sendall(b"GET /v2/health/ready HTTP/1.1\r\n")
        with Http(server.url) as http:
            expect_still_serving(http)
    finally:
        for sock in trickling:
            sock.close()


def test_connections_past_the_limit_wait_to_be_accepted(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity("id_int32", "INT32")], TARGET)
    with Server(repo, ["--http-max-connections=2"]) as server:
        request = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        held = [_connect(server.port) for _ in range(2)]
        for sock in held:
            sock.sendall(request)
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        waiting = _connect(server.port)  # queued in the listen backlog
        waiting.sendall(request)
        waiting.settimeout(1.5)
        with pytest.raises(socket.timeout):
            waiting.recv(4096)
        held.pop().close()
        waiting.settimeout(10)
        assert waiting.recv(4096).startswith(b"HTTP/1.1 200")
        for sock in [waiting, *held]:
            sock.close()


@pytest.mark.parametrize("binary", [False, True])
def test_a_huge_declared_shape_is_refused_before_allocation(server, binary):
    """2^40 INT32 elements declared, 8 bytes sent: refused with what is wrong."""
    huge = [1 << 40]
    with Http(server.url) as http:
        if binary:
            header = json.dumps({"inputs": [{
                "name": "INPUT0", "shape": [1, *huge], "datatype": "INT32",
                "parameters": {"binary_data_size": 8},
            }]}).encode()
            resp = http.infer("id_int32", header + b"\0" * 8,
                              headers={"Inference-Header-Content-Length": str(len(header))})
            expect_error(resp, 400, "input byte size mismatch for input 'INPUT0'")
        else:
            resp = http.infer("id_int32", {"inputs": [{
                "name": "INPUT0", "shape": [1, *huge], "datatype": "INT32", "data": [1, 2],
            }]})
            # 500, as Triton answers a 'data' that does not fill the shape.
            expect_error(resp, 500, "Shape does not match true shape of 'data' field")
        expect_still_serving(http)
