"""Iterative sequences (`sequence_batching { iterative_sequence: true }`), after
Triton's qa/L0_backend_python/request_rescheduling: a request needs no correlation
ID (the scheduler gives it one and the START flag); the model releases it with
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE and gets it back in a later batch,
without START, until it answers it for good. A request the model reschedules
must be None in the list `execute` returns."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import Http, expect_error
from models import model_source
from python_models import PyModel, config, serve

ITERATIVE = "sequence_batching { iterative_sequence: true }\n"
DECOUPLED = "model_transaction_policy { decoupled: true }\n"
COUNTDOWN_OUTPUTS = [("OUT", "INT32", [1]), ("CORRID", "UINT64", [1]),
                     ("START", "BOOL", [1])]


def _countdown(name, extra):
    return PyModel(name, model_source("iterative"), config(
        [("IN", "INT32", [1])], COUNTDOWN_OUTPUTS, max_batch_size=4, extra=extra))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [
        _countdown("iterative", DECOUPLED + ITERATIVE),
        PyModel("rescheduled_add", model_source("rescheduled_add"), config(
            [("INPUT0", "FP32", [16]), ("INPUT1", "FP32", [16])],
            [("OUTPUT0", "FP32", [16]), ("OUTPUT1", "FP32", [16]),
             ("EXECUTIONS", "INT32", [1])], extra=ITERATIVE)),
        PyModel("rescheduled_answered", model_source("rescheduled_answered"), config(
            [("INPUT0", "FP32", [4])], [("OUTPUT0", "FP32", [4])], extra=ITERATIVE)),
    ]
    with serve(tmp_path_factory.mktemp("py_iterative"), models) as s:
        yield s


def _stream(url, model, requests):
    """Sends `requests` ((request_id, IN, infer kwargs)) on one gRPC stream; returns
    {request_id: [(OUT, CORRID, START, final) or error text]} once all finished."""
    got = queue.Queue()
    client = grpcclient.InferenceServerClient(url)
    client.start_stream(lambda result, error: got.put((result, error)))
    for request_id, count, kwargs in requests:
        tensor = grpcclient.InferInput("IN", [1, 1], "INT32")
        tensor.set_data_from_numpy(np.array([[count]], dtype=np.int32))
        client.async_stream_infer(model, [tensor], request_id=request_id, **kwargs)
    client.stop_stream()  # waits for every request to finish
    client.close()
    out = {}
    while not got.empty():
        result, error = got.get()
        if error is not None:
            out.setdefault("error", []).append(error.message())
            continue
        response = result.get_response()
        final = response.parameters["triton_final_response"].bool_param
        out.setdefault(response.id, []).append((
            int(result.as_numpy("OUT")[0][0]), int(result.as_numpy("CORRID")[0][0]),
            bool(result.as_numpy("START")[0][0]), final))
    return out


def test_decoupled_without_correlation_id(server):
    """IN = 3: three executions, OUT 2, 1, 0; START on the first only; the correlation
    ID the scheduler gave is the same throughout; FINAL with the last response."""
    responses = _stream(server.grpc_url, "iterative", [("a", 3, {})])["a"]
    assert [(out, start, final) for out, _, start, final in responses] == [
        (2, True, False), (1, False, False), (0, False, True)]
    corrids = {corrid for _, corrid, _, _ in responses}
    assert len(corrids) == 1 and corrids != {0}


def test_concurrent_sequences_stay_apart(server):
    """Several iterative requests at once (they may share batches): each counts down
    its own IN, under its own correlation ID."""
    counts = {"a": 3, "b": 1, "c": 4, "d": 2}
    got = _stream(server.grpc_url, "iterative", [(k, v, {}) for k, v in counts.items()])
    assert "error" not in got, got["error"]
    corrids = set()
    for request_id, count in counts.items():
        responses = got[request_id]
        assert [out for out, _, _, _ in responses] == list(range(count - 1, -1, -1))
        assert [final for _, _, _, final in responses] == [False] * (count - 1) + [True]
        ids = {corrid for _, corrid, _, _ in responses}
        assert len(ids) == 1
        corrids |= ids
    assert len(corrids) == len(counts) and 0 not in corrids


def test_decoupled_with_a_correlation_id(server):
    """A request that brings its own correlation ID and START keeps that ID."""
    kwargs = {"sequence_id": 77, "sequence_start": True}
    responses = _stream(server.grpc_url, "iterative", [("x", 2, kwargs)])["x"]
    assert responses == [(1, 77, True, False), (0, 77, False, True)]


def _add_inputs(module):
    a = np.arange(16, dtype=np.float32)
    b = np.full(16, 0.5, dtype=np.float32)
    inputs = [module.InferInput("INPUT0", [16], "FP32"), module.InferInput("INPUT1", [16], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    return a, b, inputs


@pytest.mark.parametrize("module", [httpclient, grpcclient], ids=["http", "grpc"])
def test_default_mode_reschedules_then_answers(server, module):
    """No correlation ID; the first execution returns None for the rescheduled request,
    the second answers it."""
    a, b, inputs = _add_inputs(module)
    client = module.InferenceServerClient(server.url if module is httpclient
                                          else server.grpc_url)
    result = client.infer("rescheduled_add", inputs)
    client.close()
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.as_numpy("EXECUTIONS").tolist() == [2]


def test_a_response_for_a_rescheduled_request_fails_the_batch(server):
    body = {"inputs": [{"name": "INPUT0", "shape": [4], "datatype": "FP32",
                        "data": [1, 2, 3, 4]}]}
    with Http(server.url) as http:
        expect_error(
            http.infer("rescheduled_answered", body), 500,
            "Failed to process the request(s) for model 'rescheduled_answered_0_0', message: "
            "Expected a None object in the execute function return list for reschduled "
            "request, found type")


@pytest.mark.oxiserve_only  # Triton 2.51 logs the refusal and never answers the request
def test_rescheduling_without_iterative_sequences_fails_the_request(tmp_path):
    """A model whose configuration has no iterative_sequence cannot reschedule: Triton's
    core refuses the release ("Request is released with
    TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the model is not configured to handle
    such a flag."); oxiserve fails the request with that text."""
    with serve(tmp_path / "repo", [_countdown("plain", DECOUPLED)]) as s:
        kwargs = {"sequence_id": 5, "sequence_start": True}
        got = _stream(s.grpc_url, "plain", [("p", 2, kwargs)])
        log = s.output()
    assert got["p"] == [(1, 5, True, False)]
    text = ("Request is released with TRITONSERVER_REQUEST_RELEASE_RESCHEDULE, while the "
            "model is not configured to handle such a flag.")
    assert got["error"] == [text]
    assert "Failed to release request: " + text in log
