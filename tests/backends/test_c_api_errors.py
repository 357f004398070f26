"""Backend libraries that fail (tests/backends/c_api/erring.c, noexec.c): a
missing library, one without the required entry point, and an error from
each entry point fail their model with the reason in the repository index
while the other models keep serving; an error returned by
ModelInstanceExecute fails that request only, and an error response fails
one request of a batch while the rest of it is answered."""

import threading
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from c_backends import addsub, backend_directory, erring, write
from helpers import repository_index
from models import ModelSpec, Tensor
from servers import Server

CLIENTS = {"http": httpclient, "grpc": grpcclient}
# The gRPC status tritonclient reports for an HTTP status.
GRPC_STATUS = {"400": "StatusCode.INVALID_ARGUMENT", "500": "StatusCode.INTERNAL"}


def _missing(name, backend):
    return ModelSpec(name, [Tensor("X", "INT32", [1])], [Tensor("Y", "INT32", [1])],
                     backend=backend)


# model -> what its reason in the repository index says, with {repo} and
# {backends} for the folders.
FAILED = {
    "nosuch": ["unable to find backend library for backend 'nosuch'"],
    "noexec": ["TRITONBACKEND_ModelInstanceExecute", "{backends}/noexec/libtriton_noexec.so"],
    "fail_model_init": ["erring: TRITONBACKEND_ModelInitialize failed as asked"],
    "fail_instance_init": ["erring: TRITONBACKEND_ModelInstanceInitialize failed as asked"],
}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    root = tmp_path_factory.mktemp("c_api_errors")
    repo, backends = root / "repo", root / "backends"
    flag = backend_directory(backends, "batching", "erring", "noexec")
    write(repo, addsub("good"))
    write(repo, _missing("nosuch", "nosuch"))
    write(repo, _missing("noexec", "noexec"))
    write(repo, erring("fail_model_init", fail_at="ModelInitialize"))
    write(repo, erring("fail_instance_init", fail_at="ModelInstanceInitialize"))
    write(repo, erring("fail_execute", fail_at="ModelInstanceExecute"))
    # Requests that arrive while one batch executes leave together next.
    spec = erring("per_request", execute_delay_ms=300)
    spec.extra_config += "\ndynamic_batching { max_queue_delay_microseconds: 100000 }"
    write(repo, spec)
    return {"repo": repo, "backends": backends, "flag": flag}


@pytest.fixture(scope="module")
def server(layout):
    with Server(layout["repo"], [layout["flag"], "--exit-on-error=false"]) as server:
        yield server


def _good_serves(client, how="http"):
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    inputs = []
    for name in ("INPUT0", "INPUT1"):
        tensor = CLIENTS[how].InferInput(name, [2, 4], "FP32")
        tensor.set_data_from_numpy(a)
        inputs.append(tensor)
    result = client.infer("good", inputs)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + a)


@pytest.mark.parametrize("how", ["http", "grpc"])
@pytest.mark.parametrize("model", list(FAILED))
def test_c_api_failed_model_has_its_reason(layout, clients, model, how):
    entry = repository_index(clients, how)[model]
    assert entry["state"] == "UNAVAILABLE", entry
    for needle in FAILED[model]:
        assert needle.format(**layout) in entry.get("reason", ""), entry
    assert not clients[how].is_model_ready(model)


@pytest.mark.oxiserve_only  # Triton's message does not say where it looked
def test_c_api_missing_library_says_where_it_looked(layout, clients):
    reason = repository_index(clients, "http")["nosuch"]["reason"]
    for folder in (layout["repo"] / "nosuch" / "1", layout["repo"] / "nosuch",
                   layout["backends"] / "nosuch"):
        assert str(folder) in reason, reason
    assert "libtriton_nosuch.so" in reason, reason


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_other_models_keep_serving(clients, how):
    assert clients[how].is_server_live()
    assert clients[how].is_model_ready("good")
    assert clients[how].is_model_ready("fail_execute")
    _good_serves(clients[how], how)


def _x(how, value):
    tensor = CLIENTS[how].InferInput("X", [1, 1], "INT32")
    tensor.set_data_from_numpy(np.array([[value]], dtype=np.int32))
    return [tensor]


def _expect_error(call, how, http_status, message):
    with pytest.raises(InferenceServerException) as info:
        call()
    status = str(info.value.status())
    assert status == (http_status if how == "http" else GRPC_STATUS[http_status]), status
    assert message in info.value.message(), info.value.message()


def _counts(client, model):
    stats = client.get_inference_statistics(model)["model_stats"][0]
    inference = stats["inference_stats"]
    return (int(inference["success"].get("count", 0)), int(inference["fail"].get("count", 0)),
            int(stats.get("execution_count", 0)))


def _settled_counts(client, model):
    """The counts once no request of an earlier test is still being counted:
    a request's success is counted when its execution ends, which may be just
    after its client has the response (as in Triton, where a backend reports
    statistics after sending)."""
    counts = _counts(client, model)
    for _ in range(50):
        time.sleep(0.1)
        again = _counts(client, model)
        if again == counts:
            return counts
        counts = again
    return counts


def _counts_reaching(client, model, before, want):
    """The counts once (success, fail) grew by `want` since `before` (or
    after 10 s, whatever they are then)."""
    deadline = time.monotonic() + 10
    while True:
        counts = _counts(client, model)
        if (counts[0] - before[0], counts[1] - before[1]) == want or time.monotonic() > deadline:
            return counts
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_execute_error_fails_that_request(clients, how):
    """ModelInstanceExecute returns an error: its request fails with the
    message (the host answers it), and the next request succeeds."""
    client = clients[how]
    before = _settled_counts(clients["http"], "fail_execute")
    _expect_error(lambda: client.infer("fail_execute", _x(how, 13)), how, "500",
                  "erring: ModelInstanceExecute failed as asked on 13")
    result = client.infer("fail_execute", _x(how, 4))
    assert result.as_numpy("Y").tolist() == [[8]]
    success, fail, _ = _counts_reaching(clients["http"], "fail_execute", before, (1, 1))
    assert (success - before[0], fail - before[1]) == (1, 1)


def test_c_api_error_response_for_one_request_of_a_batch(server, clients):
    """Concurrent requests are batched; the one with a negative X gets an
    INVALID_ARG error response from the backend, the others their answers."""
    values = [1, 2, -3, 4, 5, 6]
    before = _settled_counts(clients["http"], "per_request")
    outcomes = {}

    def send(value):
        client = httpclient.InferenceServerClient(server.url)
        try:
            outcomes[value] = client.infer("per_request", _x("http", value)).as_numpy("Y").tolist()
        except InferenceServerException as e:
            outcomes[value] = (str(e.status()), e.message())
        finally:
            client.close()

    threads = [threading.Thread(target=send, args=(v,)) for v in values]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == {
        **{v: [[2 * v]] for v in values if v >= 0},
        -3: ("400", "erring: X must not be negative, got -3"),
    }
    success, fail, executions = _counts_reaching(clients["http"], "per_request", before, (5, 1))
    assert (success - before[0], fail - before[1]) == (5, 1)
    assert executions - before[2] < len(values)


def test_c_api_backend_initialize_error(tmp_path):
    """TRITONBACKEND_Initialize fails (as --backend-config asks): the
    backend's models fail with its message, other backends' models serve."""
    flag = backend_directory(tmp_path / "backends", "batching", "erring")
    write(tmp_path / "repo", addsub("good"))
    write(tmp_path / "repo", erring("plain"))
    flags = [flag, "--exit-on-error=false", "--backend-config=erring,fail_at=Initialize"]
    with Server(tmp_path / "repo", flags) as srv:
        client = httpclient.InferenceServerClient(srv.url)
        try:
            entry = {m["name"]: m for m in client.get_model_repository_index()}["plain"]
            assert entry["state"] == "UNAVAILABLE", entry
            assert "erring: TRITONBACKEND_Initialize failed as asked" in entry["reason"], entry
            _good_serves(client)
        finally:
            client.close()
