"""`async def execute`: a decoupled model runs its requests concurrently on one
instance (8 requests sleeping 1 s overlap), also while each awaits a decoupled
BLS stream; a default-mode one awaits each execute before the next (no
overlap). Asserted on start/end timestamps the model returns, or on how many
requests a model saw in flight at once, never on wall time."""

import concurrent.futures
import queue

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from python_models import async_bls_models, async_model, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [async_model("async_dec", True, 1.0), async_model("async_plain", False, 0.3),
              *async_bls_models()]
    with serve(tmp_path_factory.mktemp("py_async"), models) as s:
        yield s


def _in(i):
    tensor = grpcclient.InferInput("INPUT0", [1], "INT32")
    tensor.set_data_from_numpy(np.array([i], dtype=np.int32))
    return [tensor]


def test_decoupled_requests_overlap(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    for i in range(8):
        client.async_stream_infer("async_dec", _in(i), request_id=str(i))
    items = [got.get(timeout=60) for _ in range(8)]
    client.stop_stream()
    client.close()
    assert all(e is None for _, e in items), items
    times = [r.as_numpy("TIMES").tolist() for r, _ in items]
    starts, ends = [t[0] for t in times], [t[1] for t in times]
    # Every request started before any of them ended: all 8 were in flight at once.
    assert max(starts) < min(ends), times


def test_default_mode_requests_do_not_overlap(server):
    def one(i):
        client = grpcclient.InferenceServerClient(server.grpc_url)
        try:
            return client.infer("async_plain", _in(i)).as_numpy("TIMES").tolist()
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        times = sorted(pool.map(one, range(3)))
    for (_, end), (start, _) in zip(times, times[1:]):
        assert end <= start, times


def test_decoupled_bls_streams_run_concurrently(server):
    """Four requests of an async decoupled model, each awaiting a decoupled BLS
    stream (Triton's async_execute_decouple_bls): the model they call sees all
    four in flight at once. Run one at a time, each would see 1, 2, 3, 4 after
    waiting 20 s."""
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    for i in range(4):
        tensor = grpcclient.InferInput("EXPECTED", [2], "INT32")
        tensor.set_data_from_numpy(np.array([4, 20], dtype=np.int32))
        client.async_stream_infer("async_bls_stream", [tensor], request_id=str(i))
    items = [got.get(timeout=120) for _ in range(4)]
    client.stop_stream()
    client.close()
    assert all(e is None for _, e in items), items
    assert [r.as_numpy("IN_FLIGHT").tolist() for r, _ in items] == [[4]] * 4
