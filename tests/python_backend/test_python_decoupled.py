"""A decoupled Python model (repeat: one response per input element, then a
flags-only FINAL) over gRPC streaming: many responses, none, responses sent by
a thread after `execute` returned, an error mid-stream, empty final
responses, and HTTP/unary gRPC on a decoupled model."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from grpc_helpers import expect_grpc_error
from helpers import Http, expect_error
from python_models import repeat_model, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_decoupled"), [repeat_model()]) as s:
        yield s


@pytest.fixture
def client(server):
    c = grpcclient.InferenceServerClient(server.grpc_url)
    yield c
    c.close()


def _in(values):
    tensor = grpcclient.InferInput("IN", [len(values)], "INT32")
    tensor.set_data_from_numpy(np.array(values, dtype=np.int32))
    return [tensor]


def _final(result):
    return result.get_response().parameters["triton_final_response"].bool_param


def run_stream(client, values, empty_final=True, request_id="r", **params):
    """Sends one request; returns [(result, error)] up to the final response."""
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("repeat", _in(values), request_id=request_id,
                              enable_empty_final_response=empty_final,
                              parameters=params or None)
    items = []
    while True:
        result, error = got.get(timeout=30)
        items.append((result, error))
        if empty_final and result is not None and _final(result):
            break
        if not empty_final and len(items) == len(values):
            break
    client.stop_stream()
    return items


def _outs(items):
    return [(r.as_numpy("OUT").tolist(), r.as_numpy("IDX").tolist()) for r, _ in items]


def test_repeat(client):
    items = run_stream(client, [4, 5, 6, 7])
    assert all(e is None for _, e in items), items
    *data, (last, _) = items
    assert _outs(data) == [([4], [0]), ([5], [1]), ([6], [2]), ([7], [3])]
    assert [_final(r) for r, _ in data] == [False] * 4
    assert all(r.get_response().id == "r" for r, _ in items)
    assert _final(last) and last.get_response().outputs == []


def test_zero_responses_final_only(client):
    items = run_stream(client, [])
    assert len(items) == 1
    result, error = items[0]
    assert error is None and _final(result) and result.get_response().outputs == []


def test_without_empty_final_response(client):
    items = run_stream(client, [1, 2], empty_final=False)
    assert _outs(items) == [([1], [0]), ([2], [1])]
    assert [_final(r) for r, _ in items] == [False, False]


def test_responses_from_a_thread_after_execute_returned(client):
    items = run_stream(client, [9, 8, 7], mode="thread")
    assert all(e is None for _, e in items)
    data = [r for r, _ in items[:-1]]
    assert [r.as_numpy("OUT").tolist() for r in data] == [[9], [8], [7]]
    assert [r.as_numpy("AFTER_RETURN").tolist() for r in data] == [[1], [1], [1]]
    assert _final(items[-1][0])


def test_error_mid_stream(client):
    items = run_stream(client, [1, 2, 3], error_at=1)
    assert items[0][1] is None and items[0][0].as_numpy("OUT").tolist() == [1]
    assert items[1][0] is None
    assert items[1][1].message() == "no response for index 1"
    assert items[2][1] is None and items[2][0].as_numpy("OUT").tolist() == [3]
    assert items[3][1] is None and _final(items[3][0])
    assert len(items) == 4


def test_concurrent_streams_requests(client):
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    for i in range(5):
        client.async_stream_infer("repeat", _in([i, i]), request_id=str(i))
    items = [got.get(timeout=30) for _ in range(10)]
    client.stop_stream()
    assert all(e is None for _, e in items)
    by_id = {}
    for r, _ in items:
        by_id.setdefault(r.get_response().id, []).append(r.as_numpy("OUT").tolist())
    assert by_id == {str(i): [[i], [i]] for i in range(5)}


def test_unary_grpc_refused(client):
    expect_grpc_error(
        lambda: client.infer("repeat", _in([1])),
        "UNIMPLEMENTED",
        "ModelInfer RPC doesn't support models with decoupled transaction policy",
    )


def test_http_on_decoupled_model(server):
    body = {"inputs": [{"name": "IN", "shape": [2], "datatype": "INT32", "data": [1, 2]}]}
    with Http(server.url) as http:
        expect_error(http.infer("repeat", body), 501,
                     "HTTP end point doesn't support models with decoupled transaction policy")
