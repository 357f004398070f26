"""ModelStreamInfer through tritonclient's stream API: many requests on one
stream running concurrently, errors that leave the stream open, decoupled
models and `triton_final_response`, deadlines and cancellation."""

import queue
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from grpc_helpers import expect_grpc_error, infer_input
from models import identity, write_repository
from servers import TARGET, Server

SLOW_MS = 1000


@pytest.fixture(scope="module")
def stream_server(tmp_path_factory):
    specs = [
        identity("fast", "INT32"),
        identity("slow", "INT32", execute_delay_ms=SLOW_MS),
        identity("queued", "INT32", execute_delay_ms=300),
        identity("dec", "INT32", decoupled=True),
        identity("dec_slow", "INT32", decoupled=True, execute_delay_ms=SLOW_MS),
    ]
    repo = write_repository(tmp_path_factory.mktemp("grpc_stream"), specs, TARGET)
    with Server(repo) as server:
        yield server


@pytest.fixture
def client(stream_server):
    c = grpcclient.InferenceServerClient(stream_server.grpc_url)
    yield c
    c.close()


class Collector:
    """The stream callback: (result, error) pairs in arrival order."""

    def __init__(self):
        self.items = queue.Queue()

    def __call__(self, result, error):
        self.items.put((result, error))

    def take(self, n, timeout=30):
        return [self.items.get(timeout=timeout) for _ in range(n)]


def _input(values=(1, 2, 3)):
    return [infer_input("INPUT0", np.array([list(values)], dtype=np.int32), "INT32")]


def _final(result):
    parameter = result.get_response().parameters["triton_final_response"]
    return parameter.bool_param


def test_many_requests_on_one_stream(client):
    got = Collector()
    client.start_stream(callback=got)
    for i in range(20):
        client.async_stream_infer("fast", _input((i, i, i)), request_id=str(i))
    items = got.take(20)
    client.stop_stream()
    assert all(error is None for _, error in items), items
    by_id = {r.get_response().id: r for r, _ in items}
    assert sorted(by_id, key=int) == [str(i) for i in range(20)]
    for i, result in by_id.items():
        assert result.as_numpy("OUTPUT0").tolist() == [[int(i)] * 3]
        assert _final(result) is True


def test_responses_of_models_not_decoupled_keep_request_order(client):
    got = Collector()
    client.start_stream(callback=got)
    client.async_stream_infer("slow", _input(), request_id="slow")
    client.async_stream_infer("fast", _input(), request_id="fast")
    items = got.take(2)
    client.stop_stream()
    assert [r.get_response().id for r, _ in items] == ["slow", "fast"]


def test_decoupled_requests_run_concurrently_and_answer_when_ready(client):
    got = Collector()
    client.start_stream(callback=got)
    client.async_stream_infer("dec_slow", _input(), request_id="slow")
    client.async_stream_infer("dec", _input(), request_id="fast")
    items = got.take(2)
    client.stop_stream()
    assert [r.get_response().id for r, _ in items] == ["fast", "slow"]


def test_an_error_leaves_the_stream_open(client):
    got = Collector()
    client.start_stream(callback=got)
    client.async_stream_infer("no_such_model", _input(), request_id="bad")
    client.async_stream_infer("fast", _input(), request_id="bad-shape", model_version="x")
    ((result, error), (result2, error2)) = got.take(2)
    assert result is None and result2 is None
    messages = " | ".join([error.message(), error2.message()])
    assert "failed to get model version from specified version string 'x'" in messages
    assert "Request for unknown model: 'no_such_model' is not found" in messages
    client.async_stream_infer("fast", _input(), request_id="good")
    ((result, error),) = got.take(1)
    client.stop_stream()
    assert error is None and result.get_response().id == "good"


def test_infer_on_a_decoupled_model_is_refused(client):
    expect_grpc_error(
        lambda: client.infer("dec", _input()),
        "UNIMPLEMENTED",
        "ModelInfer RPC doesn't support models with decoupled transaction policy",
    )


@pytest.mark.parametrize("empty_final", [False, True])
def test_decoupled_model_on_a_stream(client, empty_final):
    got = Collector()
    client.start_stream(callback=got)
    client.async_stream_infer(
        "dec", _input((4, 5, 6)), request_id="d", enable_empty_final_response=empty_final
    )
    ((result, error),) = got.take(1)
    # The response carries the final flag, so no empty final response follows.
    time.sleep(0.3)
    assert got.items.empty()
    client.stop_stream()
    assert error is None
    assert result.as_numpy("OUTPUT0").tolist() == [[4, 5, 6]]
    assert result.get_response().id == "d"
    assert _final(result) is True


def test_stream_deadline(client):
    got = Collector()
    client.start_stream(callback=got, stream_timeout=0.5)
    client.async_stream_infer("slow", _input(), request_id="late")
    ((result, error),) = got.take(1)
    assert result is None
    assert "Deadline" in error.message(), error.message()
    client.stop_stream()
    assert client.infer("fast", _input()).as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]


def _executed(client, model):
    stats = client.get_inference_statistics(model, as_json=True)["model_stats"][0]
    return int(stats.get("execution_count", 0))


def test_cancelling_a_stream(client):
    before = _executed(client, "queued")
    got = Collector()
    client.start_stream(callback=got)
    for i in range(6):
        client.async_stream_infer("queued", _input(), request_id=str(i))
    time.sleep(0.1)
    client.stop_stream(cancel_requests=True)
    # The server keeps serving, on a new stream too.
    again = Collector()
    client.start_stream(callback=again)
    client.async_stream_infer("fast", _input(), request_id="after")
    ((result, error),) = again.take(1)
    client.stop_stream()
    assert error is None and result.get_response().id == "after"
    if TARGET == "oxiserve":
        # Requests still queued when the stream went away were skipped.
        time.sleep(1.0)
        assert _executed(client, "queued") - before < 6


def test_triton_grpc_error_header_and_a_request_refused_before_it_runs(client):
    """With `triton_grpc_error: true` only a model's errors end the stream; a
    request refused up front is still reported in `error_message` (Triton 2.51)."""
    got = Collector()
    client.start_stream(callback=got, headers={"triton_grpc_error": "true"})
    client.async_stream_infer("no_such_model", _input(), request_id="bad")
    client.async_stream_infer("fast", _input(), request_id="good")
    (bad, bad_error), (good, good_error) = got.take(2)
    client.stop_stream()
    assert bad is None and bad_error.status() is None
    assert "no_such_model" in bad_error.message()
    assert good_error is None and good.get_response().id == "good"


def test_unary_deadline(client):
    """The client's own deadline fires first (DEADLINE_EXCEEDED). On oxiserve,
    if the server's timer wins the race (a loaded machine), tonic answers
    CANCELLED "Timeout expired"; either way the request is dropped."""
    with pytest.raises(InferenceServerException) as info:
        client.infer("slow", _input(), client_timeout=0.3)
    allowed = {"StatusCode.DEADLINE_EXCEEDED"}
    if TARGET == "oxiserve":
        allowed.add("StatusCode.CANCELLED")
    assert info.value.status() in allowed, f"{info.value.status()}: {info.value.message()}"
    assert client.infer("fast", _input()).as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]
