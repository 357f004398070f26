"""Cancellation seen by a decoupled Python model: after the gRPC stream is
cancelled (or its deadline passes) `sender.is_cancelled()` turns true, the
model stops sending and still closes with FINAL; the model serves on."""

import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from helpers import wait_for
from python_models import repeat_model, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("py_cancel"), [repeat_model()]) as s:
        yield s


def _in(values):
    tensor = grpcclient.InferInput("IN", [len(values)], "INT32")
    tensor.set_data_from_numpy(np.array(values, dtype=np.int32))
    return [tensor]


def _marker_count(marker):
    text = wait_for(lambda: marker.exists() and marker.read_text(), timeout=30,
                    what="the model to see the cancellation")
    prefix, suffix = "cancelled after ", " responses"
    assert text.startswith(prefix) and text.endswith(suffix), text
    return int(text[len(prefix):-len(suffix)])


def _still_serves(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("repeat", _in([42]), request_id="after")
    result, error = got.get(timeout=30)
    client.stop_stream()
    client.close()
    assert error is None and result.as_numpy("OUT").tolist() == [42]


def test_stream_cancelled_mid_way(server, tmp_path):
    marker = tmp_path / "cancelled"
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("repeat", _in(list(range(100))), request_id="c",
                              parameters={"delay_ms": 50, "marker": str(marker)})
    first = [got.get(timeout=30) for _ in range(2)]
    assert all(e is None for _, e in first)
    client.stop_stream(cancel_requests=True)
    client.close()
    count = _marker_count(marker)
    assert 2 <= count < 100
    _still_serves(server)


def test_stream_deadline_cancels(server, tmp_path):
    marker = tmp_path / "deadline"
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)), stream_timeout=1.0)
    client.async_stream_infer("repeat", _in(list(range(100))), request_id="d",
                              parameters={"delay_ms": 50, "marker": str(marker)})
    count = _marker_count(marker)
    client.stop_stream()
    client.close()
    assert 1 <= count < 100
    _still_serves(server)
