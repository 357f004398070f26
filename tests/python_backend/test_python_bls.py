"""BLS from a Python model (`async def execute`): exec() to add_sub and to an
identity model, to a missing model (an error response, not an exception),
exec(decoupled=True) over the repeat model, async_exec + asyncio.gather, a
request timeout, ResponseIterator.cancel(), and BLS outside `execute`."""

import json

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from models import identity
from python_models import add_sub, bls_model, repeat_model, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [
        bls_model(),
        add_sub(),
        repeat_model(),
        # The identity backend on oxiserve; a Python copy of it on real Triton.
        identity("identity", "INT32"),
        # Triton enforces a request's timeout only in a queue that allows it.
        identity("slow", "INT32", execute_delay_ms=1500, python_only=True,
                 extra_config="dynamic_batching { default_queue_policy { timeout_action: "
                              "REJECT, allow_timeout_override: true, "
                              "default_timeout_microseconds: 60000000 } }"),
    ]
    with serve(tmp_path_factory.mktemp("py_bls"), models) as s:
        yield s


def run(server, mode):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    try:
        result = client.infer("bls", [tensor], client_timeout=60)
    finally:
        client.close()
    return json.loads(result.as_numpy("RESULT")[0])


def test_exec_add_sub(server):
    assert run(server, "add_sub") == {
        "OUTPUT0": [[11.0, 22.0, 33.0, 44.0]],
        "OUTPUT1": [[-9.0, -18.0, -27.0, -36.0]],
    }


def test_exec_identity(server):
    assert run(server, "identity") == {"OUTPUT0": [[5, 6, 7]]}


def test_exec_missing_model_is_an_error_response(server):
    assert run(server, "missing") == {
        "error": "Model no_such_model - Error when running inference: Failed for execute "
                 "the inference request. Model 'no_such_model' is not ready.",
        "code": 1,
    }


def test_exec_decoupled(server):
    """Triton 2.51 also yields the flags-only final response (no outputs)."""
    got = run(server, "decoupled")
    assert got == [
        {"OUT": [4], "IDX": [0]},
        {"OUT": [5], "IDX": [1]},
        {"OUT": [6], "IDX": [2]},
        {},
    ]


def test_decoupled_model_without_decoupled_flag(server):
    """An error response (not an exception), with Triton's stray quote at the end."""
    got = run(server, "decoupled_without_flag")
    assert got == {"code": 1, "error": (
        "Model repeat - Error when running inference: Model repeat is using the "
        "decoupled. The current BLS request call doesn't support models using the "
        "decoupled transaction policy. Please use 'decoupled=True' argument to the "
        "'exec' or 'async_exec' calls for decoupled models.'")}


def test_async_exec_gather(server):
    got = run(server, "gather")
    assert got == [
        {"OUTPUT0": [[i + 1.0] * 4], "OUTPUT1": [[i - 1.0] * 4]} for i in range(4)
    ]


def test_timeout(server):
    assert run(server, "timeout") == {
        "late": {"error": "Request timeout expired", "code": 1},
        "busy": {"OUTPUT0": [[1]]},
    }


@pytest.mark.oxiserve_only
def test_iterator_cancel(server):
    """ResponseIterator.cancel() is newer than Triton 2.51 (AttributeError there)."""
    got = run(server, "cancel")
    assert got["first"] == [{"OUT": [0], "IDX": [0]}]
    assert got["rest_count"] < 49


def test_bls_outside_execute(server):
    assert run(server, "init_bls") == {
        "init_bls": "TritonModelException: BLS is only supported during the 'execute' function."
    }


def test_exec_from_forked_processes(server):
    """multiprocessing.Pool workers the model forks call exec() (as Triton's
    qa/python_models/bls test_multiprocess does); each gets its own answer."""
    assert run(server, "multiprocess") == [
        {"OUTPUT0": [[i + 1.0] * 4], "OUTPUT1": [[i - 1.0] * 4]} for i in range(8)
    ]
