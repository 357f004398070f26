"""Backends written in C against Triton's backend C API (tests/backends/c_api/),
compiled at test time and loaded from --backend-directory: a batching backend
(exact sums and differences, the requested outputs only, batches formed by the
dynamic batcher and reported in the statistics, configuration auto-complete)
and a decoupled one (n responses from a thread of its own, then the final flag
alone; cancellation), over HTTP and gRPC."""

import queue
import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from c_backends import addsub, backend_directory, parameters, repeat, write
from helpers import wait_for
from servers import Server

CLIENTS = {"http": httpclient, "grpc": grpcclient}
BATCH_REQUESTS = 8

# A batching model's configuration with no inputs or outputs: the backend
# fills them in when auto-complete is on.
AUTO_CONFIG = 'name: "addsub_auto"\nbackend: "batching"\nmax_batch_size: 8\n'


def _write_auto(repo):
    folder = repo / "addsub_auto"
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(AUTO_CONFIG)


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    """The --backend-directory flag of a folder with both libraries."""
    return backend_directory(tmp_path_factory.mktemp("c_backends"), "batching", "decoupled")


@pytest.fixture(scope="module")
def server(tmp_path_factory, backends):
    repo = tmp_path_factory.mktemp("c_api_repo")
    write(repo, addsub())
    # Requests that arrive while one batch executes (200 ms) queue up and
    # leave together as the next batch.
    write(repo, addsub("addsub_batched", execute_delay_ms=200,
                       extra_config="dynamic_batching { max_queue_delay_microseconds: 100000 }"))
    write(repo, repeat())
    write(repo, repeat("repeat_slow", extra_config=parameters(response_delay_ms=200)))
    _write_auto(repo)
    with Server(repo, [backends]) as server:
        yield server


def _inputs(client, a, b):
    tensors = []
    for name, array in (("INPUT0", a), ("INPUT1", b)):
        tensor = CLIENTS[client].InferInput(name, list(array.shape), "FP32")
        tensor.set_data_from_numpy(array)
        tensors.append(tensor)
    return tensors


def _operands(rows, cols=4, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-100, 100, (rows, cols)).astype(np.float32)
    b = rng.uniform(-100, 100, (rows, cols)).astype(np.float32)
    return a, b


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_sums_and_differences(clients, how):
    a, b = _operands(3)
    result = clients[how].infer("addsub", _inputs(how, a, b))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.as_numpy("OUTPUT0").dtype == np.float32


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_only_requested_outputs(clients, how):
    a, b = _operands(2, seed=1)
    wanted = [CLIENTS[how].InferRequestedOutput("OUTPUT1")]
    result = clients[how].infer("addsub", _inputs(how, a, b), outputs=wanted)
    response = result.get_response()
    names = [o["name"] for o in response["outputs"]] if how == "http" else [
        o.name for o in response.outputs]
    assert names == ["OUTPUT1"]
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def _stats(client, model):
    stats = client.get_inference_statistics(model)["model_stats"][0]
    batches = {int(b["batch_size"]): int(b["compute_infer"]["count"])
               for b in stats.get("batch_stats", [])}
    return (int(stats.get("inference_count", 0)), int(stats.get("execution_count", 0)),
            int(stats["inference_stats"]["success"].get("count", 0)), batches)


def test_c_api_dynamic_batcher_forms_batches(server, clients):
    """Concurrent requests of 1 and 2 rows run in fewer executions than
    requests; each request still gets its own rows back, and the statistics
    the backend reported count rows, batches and requests."""
    client = clients["http"]
    before = _stats(client, "addsub_batched")
    results, errors = {}, []

    def send(i):
        a, b = _operands(1 + i % 2, seed=10 + i)
        # A client per thread: one tritonclient HTTP client is not for sharing.
        own = httpclient.InferenceServerClient(server.url)
        try:
            results[i] = (a, b, own.infer("addsub_batched", _inputs("http", a, b)))
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(e)
        finally:
            own.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(BATCH_REQUESTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for a, b, result in results.values():
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)

    inferences, executions, successes, batches = _stats(client, "addsub_batched")
    rows = sum(1 + i % 2 for i in range(BATCH_REQUESTS))
    assert inferences - before[0] == rows
    assert successes - before[2] == BATCH_REQUESTS
    assert 1 <= executions - before[1] < BATCH_REQUESTS
    new = {size: count - before[3].get(size, 0) for size, count in batches.items()}
    assert sum(size * count for size, count in new.items()) == rows, new
    assert max(size for size, count in new.items() if count) > 2, new


def test_c_api_auto_complete_fills_inputs_and_outputs(clients):
    config = clients["http"].get_model_config("addsub_auto")
    for key, names in (("input", ["INPUT0", "INPUT1"]), ("output", ["OUTPUT0", "OUTPUT1"])):
        assert [(t["name"], t["data_type"], t["dims"]) for t in config[key]] == [
            (name, "TYPE_FP32", [-1]) for name in names], config[key]
    assert config["max_batch_size"] == 8
    a, b = _operands(2, cols=3, seed=2)
    result = clients["grpc"].infer("addsub_auto", _inputs("grpc", a, b))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


@pytest.mark.parametrize("flag", ["--disable-auto-complete-config", "--strict-model-config=true"])
def test_c_api_no_auto_complete_when_disabled(tmp_path, backends, flag):
    """The backend sees auto-complete off and leaves the configuration as
    written: the model loads with no inputs or outputs."""
    _write_auto(tmp_path)
    with Server(tmp_path, [backends, flag]) as srv:
        client = httpclient.InferenceServerClient(srv.url)
        try:
            config = client.get_model_config("addsub_auto")
        finally:
            client.close()
    assert config.get("input", []) == [] and config.get("output", []) == [], config


class Stream:
    """A gRPC stream: (result, error) pairs in arrival order."""

    def __init__(self, client):
        self.client = client
        self.items = queue.Queue()
        client.start_stream(callback=lambda result, error: self.items.put((result, error)))

    def send(self, model, n, request_id, **kw):
        tensor = grpcclient.InferInput("IN", [1], "INT32")
        tensor.set_data_from_numpy(np.array([n], dtype=np.int32))
        self.client.async_stream_infer(model, [tensor], request_id=request_id, **kw)

    def take(self, count, timeout=30):
        items = [self.items.get(timeout=timeout) for _ in range(count)]
        errors = [error for _, error in items if error is not None]
        assert not errors, [e.message() for e in errors]
        return [result for result, _ in items]

    def close(self, cancel=False):
        self.client.stop_stream(cancel_requests=cancel)


def _answers(results):
    """request id -> [(OUT value or None, final flag)] in arrival order."""
    by_id = {}
    for result in results:
        response = result.get_response()
        out = result.as_numpy("OUT")
        final = response.parameters["triton_final_response"].bool_param
        by_id.setdefault(response.id, []).append(
            (None if out is None else out.tolist(), final))
    return by_id


def test_c_api_decoupled_streams_n_responses_then_final(clients):
    """n = 3 gives OUT 0, 1, 2 and then the final flag alone (an empty final
    response, as asked); n = 0 gives only the final flag."""
    stream = Stream(clients["grpc"])
    try:
        stream.send("repeat", 3, "three", enable_empty_final_response=True)
        stream.send("repeat", 0, "none", enable_empty_final_response=True)
        answers = _answers(stream.take(5))
    finally:
        stream.close()
    assert answers == {
        "three": [([0], False), ([1], False), ([2], False), (None, True)],
        "none": [(None, True)],
    }


def _cancelled_streams(client):
    """What the decoupled backend reports for IN = -1: the streams of
    repeat_slow it saw cancelled."""
    stream = Stream(client)
    try:
        stream.send("repeat_slow", -1, "count")
        (result,) = stream.take(1)
    finally:
        stream.close()
    return int(result.as_numpy("OUT")[0])


def test_c_api_decoupled_cancellation_reaches_the_backend(clients):
    """A cancelled stream is seen by the backend
    (TRITONBACKEND_ResponseFactoryIsCancelled), which stops sending; the
    model keeps serving."""
    client = clients["grpc"]
    assert _cancelled_streams(client) == 0
    stream = Stream(client)
    stream.send("repeat_slow", 1000, "long")
    (first,) = stream.take(1)
    assert first.as_numpy("OUT").tolist() == [0]
    stream.close(cancel=True)
    wait_for(lambda: _cancelled_streams(client) == 1, what="the backend to see the cancellation")
    stream = Stream(client)
    try:
        stream.send("repeat", 2, "after")
        answers = _answers(stream.take(2))
    finally:
        stream.close()
    assert answers == {"after": [([0], False), ([1], False)]}
