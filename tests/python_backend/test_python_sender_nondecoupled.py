"""A default-mode (not decoupled) Python model answering through the
response sender: one response (with FINAL, or FINAL after it), and the
errors the sender raises for everything else. A response sent before
`execute` returns (or fails) is the one the client gets, as in Triton."""

import json
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from grpc_helpers import expect_grpc_error
from helpers import Http
from python_models import sender_model, serve
from servers import TARGET


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_sender"), [sender_model()]) as s:
        yield s


def _http(server, mode):
    body = {"inputs": [{"name": "MODE", "shape": [1], "datatype": "BYTES", "data": [mode]}]}
    with Http(server.url) as http:
        return http.infer("sender_model", body)


@pytest.mark.parametrize("mode", ["one_final", "one_then_final"])
def test_one_response_via_sender(server, mode):
    resp = _http(server, mode)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"] == [
        {"name": "OUTPUT0", "datatype": "BYTES", "shape": [1], "data": ["one"]}]


def test_grpc_one_response(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"one_final"], dtype=np.object_))
    assert client.infer("sender_model", [tensor]).as_numpy("OUTPUT0").tolist() == [b"one"]
    client.close()


def test_sender_errors(server):
    resp = _http(server, "probe")
    assert resp.status_code == 200, resp.text
    before = json.loads(resp.json()["outputs"][0]["data"][0])
    assert before == [
        "TritonModelException: Unable to send response. Unsupported flag provided.",
        "TritonModelException: Inference Response object must be provided when the "
        "response flags is set to zero.",
        "TritonModelException: Unable to send response. Non-decoupled model cannot send "
        "complete final before sending a response.",
    ]
    after = json.loads(_http(server, "report").json()["outputs"][0]["data"][0])
    assert after == [
        "TritonModelException: Unable to send response. Non-decoupled model cannot send "
        "more than one response.",
        None,
        "TritonModelException: Unable to send response. Response sender has been closed.",
        # A response after FINAL hits the one-response check before the closed one.
        "TritonModelException: Unable to send response. Non-decoupled model cannot send "
        "more than one response.",
    ]


def test_two_sends_fail_the_request(server):
    """The second send raises out of `execute`. Triton 2.51 over HTTP answers
    500 with the first response as the body; over gRPC, INTERNAL."""
    resp = _http(server, "two_sends")
    assert resp.status_code == 500, resp.text
    if TARGET == "triton":
        assert resp.json() == {"model_name": "sender_model", "model_version": "1", "outputs": [
            {"name": "OUTPUT0", "datatype": "BYTES", "shape": [1], "data": ["first"]}]}
    else:  # oxiserve says what went wrong, as Triton's gRPC endpoint does
        assert resp.json() == {"error": "expected a single response, got 2"}
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"two_sends"], dtype=np.object_))
    expect_grpc_error(lambda: client.infer("sender_model", [tensor]), "INTERNAL",
                      "expected a single response, got 2")
    client.close()
    assert _http(server, "one_final").status_code == 200


def _stream(server, mode):
    """What a gRPC stream gets for one request: [OUTPUT0 values or error texts]."""
    got = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url)
    client.start_stream(lambda result, error: got.put((result, error)))
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    client.async_stream_infer("sender_model", [tensor])
    client.stop_stream()
    client.close()
    out = []
    while not got.empty():
        result, error = got.get()
        out.append(error.message() if error else result.as_numpy("OUTPUT0").tolist())
    return out


@pytest.mark.parametrize("mode", ["final_then_return", "final_then_return_none_list"])
def test_sent_with_final_then_returned(server, mode):
    """The model sends a response with FINAL, then returns a list for the request
    (a response, which meets the closed sender, or None): the sent one is delivered,
    on every endpoint, and nothing fails."""
    resp = _http(server, mode)
    assert resp.status_code == 200, resp.text
    assert resp.json()["outputs"][0]["data"] == ["sent"]
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    assert client.infer("sender_model", [tensor]).as_numpy("OUTPUT0").tolist() == [b"sent"]
    client.close()
    assert _stream(server, mode) == [[b"sent"]]


@pytest.mark.parametrize("mode", ["send_then_return", "send_then_raise", "two_sends"])
def test_sent_then_failed(server, mode):
    """The model sends a response without FINAL, then fails (returns a response: a
    second one; raises; sends again): a gRPC stream delivers the sent response
    alone, as Triton's (one response slot per request of a default-mode model);
    ModelInfer fails with INTERNAL "expected a single response, got 2"."""
    assert _stream(server, mode) == [[b"first" if mode == "two_sends" else b"sent"]]
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    expect_grpc_error(lambda: client.infer("sender_model", [tensor]), "INTERNAL",
                      "expected a single response, got 2")
    client.close()
    assert _http(server, mode).status_code == 500
