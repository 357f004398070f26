"""Triton's own Python backend library, `libtriton_python.so` with its
`triton_python_backend_stub` (from the nvidia-pytriton wheel, set up by
tests/support/triton_python_backend.py), served by oxiserve's backend C API
host: models configured `backend: "python"` with `runtime:
"libtriton_python.so"` load it from <--backend-directory>/python/, as the
design doc (docs/design/backend-c-api.md) says, and run Triton model.py files
as they are (tests/python_backend/models/, which tests/python_backend/ checks
on real Triton): a plain model with batches over HTTP and gRPC, BLS to a model
of the library and to a built-in one, a decoupled model streaming over gRPC, a
custom metric on /metrics, an exception in `execute`, and
pb_utils.load_model / unload_model.

On real Triton the same files run its own Python backend, which
tests/python_backend/ covers already: only the plain model's tests run there
too (they check the model files and the set-up); the others are oxiserve-only."""

import dataclasses
import json
import queue
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

import triton_python_backend
from helpers import Http, expect_error, wait_for
from models import identity, model_source
from python_models import (PyModel, add_sub, bls_model, config, faulty_model,
                           repeat_model, write_repo)
from scrapes import scrape
from servers import Server

CLIENTS = {"http": httpclient, "grpc": grpcclient}
RUNTIME = 'runtime: "libtriton_python.so"\n'
# Triton's own backend is the same thing there: tests/python_backend/ covers it.
SAME_ON_TRITON = pytest.mark.oxiserve_only


def library(model):
    """`model` served by Triton's library: its configuration names it as `runtime`."""
    return dataclasses.replace(model, config=RUNTIME + model.config)


CONTROLLER = library(PyModel(
    "controller", model_source("model_control"),
    config([("COMMAND", "BYTES", [1])], [("RESULT", "BYTES", [1])])))
METRICS = library(PyModel(
    "metric_scenarios", model_source("metric_scenarios"),
    config([("MODE", "BYTES", [1])], [("OUT", "BYTES", [1])])))
LIBRARY_MODELS = [library(add_sub()), library(bls_model()), library(repeat_model()),
                  library(faulty_model()), METRICS, CONTROLLER]
# What the controller loads: a model of the library, by configuration and files.
LOADED = {
    "backend": "python",
    "runtime": "libtriton_python.so",
    "max_batch_size": 0,
    "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
}


@pytest.fixture(scope="session")
def python_library():
    """The library's --backend-directory and the server environment its stub needs."""
    try:
        return triton_python_backend.install()
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        pytest.fail(f"cannot set up Triton's Python backend library: {e}", pytrace=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory, python_library):
    # The built-in identity backend on oxiserve (a Python copy on Triton), for BLS.
    models = [*LIBRARY_MODELS, identity("identity", "INT32")]
    repo = write_repo(tmp_path_factory.mktemp("c_api_python_library"), models)
    # The environment only adds what the stub needs, as a user of the wheel
    # gives Triton too (see triton_python_backend.py).
    flags = [python_library.flag, "--model-control-mode=explicit", "--load-model=*"]
    with Server(repo, flags, env=python_library.env) as server:
        yield server


def _children(server):
    """{model.py: executable} of `server`'s child processes (a Python stub's
    first argument is its model's model.py)."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            args = (proc / "cmdline").read_bytes().split(b"\0")
            exe = str((proc / "exe").resolve())
        except (OSError, IndexError, ValueError):
            continue  # not a process, or gone meanwhile
        if ppid == server.proc.pid and len(args) > 1:
            found[args[1].decode(errors="replace")] = exe
    return found


def _stub(python_library):
    return str(python_library.backend_directory / "python" / "triton_python_backend_stub")


@SAME_ON_TRITON
def test_c_api_python_library_runs_the_stub_of_the_library(server, python_library):
    """Each model runs in the wheel's stub, not in oxiserve's own Python backend."""
    children = _children(server)
    for model in LIBRARY_MODELS:
        model_py = str(server.repo / model.name / "1" / "model.py")
        assert children.get(model_py) == _stub(python_library), (model.name, children)


def _add_sub_inputs(how, a, b):
    tensors = []
    for name, array in (("INPUT0", a), ("INPUT1", b)):
        tensor = CLIENTS[how].InferInput(name, list(array.shape), "FP32")
        tensor.set_data_from_numpy(array)
        tensors.append(tensor)
    return tensors


def _operands(rows, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-100, 100, (rows, 4)).astype(np.float32),
            rng.uniform(-100, 100, (rows, 4)).astype(np.float32))


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_python_library_add_sub(clients, how):
    a, b = _operands(3, seed=1)
    result = clients[how].infer("add_sub", _add_sub_inputs(how, a, b))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    assert result.as_numpy("OUTPUT0").dtype == np.float32


def test_c_api_python_library_concurrent_requests_keep_their_rows(server):
    """Requests of 1 and 2 rows at once, batched as the dynamic batcher
    gathers them: each gets its own sums and differences back."""
    results, errors = {}, []

    def send(i):
        a, b = _operands(1 + i % 2, seed=10 + i)
        own = httpclient.InferenceServerClient(server.url)  # one per thread
        try:
            results[i] = (a, b, own.infer("add_sub", _add_sub_inputs("http", a, b)))
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(e)
        finally:
            own.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 8
    for a, b, result in results.values():
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def _bls(client, mode):
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([mode.encode()], dtype=np.object_))
    return json.loads(client.infer("bls", [tensor]).as_numpy("RESULT")[0])


@SAME_ON_TRITON
def test_c_api_python_library_bls(clients):
    """BLS from a model of the library to another of it (add_sub), to a
    built-in backend's model (identity), to a decoupled one, and to none."""
    client = clients["grpc"]
    assert _bls(client, "add_sub") == {
        "OUTPUT0": [[11.0, 22.0, 33.0, 44.0]],
        "OUTPUT1": [[-9.0, -18.0, -27.0, -36.0]],
    }
    assert _bls(client, "identity") == {"OUTPUT0": [[5, 6, 7]]}
    assert _bls(client, "decoupled") == [
        {"OUT": [4], "IDX": [0]}, {"OUT": [5], "IDX": [1]}, {"OUT": [6], "IDX": [2]}, {}]
    assert _bls(client, "init_bls") == {
        "init_bls": "TritonModelException: BLS is only supported during the 'execute' function."}
    assert _bls(client, "missing") == {
        "error": "Model no_such_model - Error when running inference: Failed for execute "
                 "the inference request. Model 'no_such_model' is not ready.",
        "code": 1,
    }


def _stream(client, values, mode):
    """The (OUT, IDX, AFTER_RETURN) of each response of one streamed request, and
    whether the last one was the flags-only final response."""
    got = queue.Queue()
    tensor = grpcclient.InferInput("IN", [len(values)], "INT32")
    tensor.set_data_from_numpy(np.array(values, dtype=np.int32))
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    try:
        client.async_stream_infer("repeat", [tensor], enable_empty_final_response=True,
                                  parameters={"mode": mode})
        responses = []
        while True:
            result, error = got.get(timeout=30)
            assert error is None, error
            response = result.get_response()
            if response.parameters["triton_final_response"].bool_param:
                return responses, response.outputs == []
            responses.append(tuple(result.as_numpy(n).tolist()
                                   for n in ("OUT", "IDX", "AFTER_RETURN")))
    finally:
        client.stop_stream()


@SAME_ON_TRITON
@pytest.mark.parametrize("mode,after_return", [("inline", 0), ("thread", 1)])
def test_c_api_python_library_decoupled_stream(server, mode, after_return):
    """One response per element, sent from execute or from a thread of the
    model after execute returned, then the final flag alone."""
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        responses, final_alone = _stream(client, [7, 8, 9], mode)
    finally:
        client.close()
    assert responses == [([v], [i], [after_return]) for i, v in enumerate([7, 8, 9])]
    assert final_alone


@SAME_ON_TRITON
def test_c_api_python_library_custom_metric(clients, server):
    tensor = httpclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"counter"], dtype=np.object_))
    seen = json.loads(clients["http"].infer("metric_scenarios", [tensor]).as_numpy("OUT")[0])
    assert seen == {"before": 0.0, "after": 2023.0}
    scraped = scrape(server)
    assert scraped.help["test_counter"] == "test metric counter kind end to end"
    assert scraped.type["test_counter"] == "counter"
    labels = {"example1": "counter_label1", "example2": "counter_label2"}
    assert scraped.value("test_counter", **labels) == 2023
    # The one made in initialize, when the model loaded.
    assert scraped.value("test_initialized", where="initialize") == 5


def _faulty(server, mode):
    body = {"inputs": [{"name": "MODE", "shape": [1], "datatype": "BYTES", "data": [mode]}]}
    with Http(server.url) as http:
        return http.infer("faulty", body)


@SAME_ON_TRITON
def test_c_api_python_library_error_in_execute(server, clients):
    """The exception's text (with the stub's traceback) fails the request;
    the model and the server keep serving."""
    line = next(i for i, text in enumerate(model_source("faulty").splitlines(), 1)
                if "the model raised this" in text)
    path = server.repo / "faulty" / "1" / "model.py"
    assert expect_error(_faulty(server, "raise"), 500) == (
        "Failed to process the request(s) for model 'faulty_0_0', message: "
        f"TritonModelException: the model raised this\n\nAt:\n  {path}({line}): execute\n")
    ok = _faulty(server, "ok")
    assert ok.status_code == 200, ok.text
    assert ok.json()["outputs"][0]["data"] == [7]
    a, b = _operands(1, seed=3)
    result = clients["grpc"].infer("add_sub", _add_sub_inputs("grpc", a, b))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)


def _control(client, **command):
    tensor = httpclient.InferInput("COMMAND", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([json.dumps(command).encode()], dtype=np.object_))
    return json.loads(client.infer("controller", [tensor]).as_numpy("RESULT")[0])


@SAME_ON_TRITON
def test_c_api_python_library_load_and_unload_model(server, clients, python_library):
    """pb_utils.load_model of a new model of the library (its configuration and
    model.py given as files), served by the library's stub; then
    pb_utils.unload_model."""
    client = clients["http"]
    files = {"file:1/model.py": model_source("identity")}
    assert _control(client, op="load", name="loaded", config=json.dumps(LOADED),
                    files=files) == {"value": None}
    assert _control(client, op="ready", name="loaded") == {"value": True}
    assert [exe for model_py, exe in _children(server).items()
            if model_py.endswith("/loaded/1/model.py")] == [_stub(python_library)]
    tensor = httpclient.InferInput("INPUT0", [1], "FP32")
    tensor.set_data_from_numpy(np.array([2.5], dtype=np.float32))
    assert client.infer("loaded", [tensor]).as_numpy("OUTPUT0").tolist() == [2.5]
    assert _control(client, op="unload", name="loaded") == {"value": None}
    wait_for(lambda: not client.is_model_ready("loaded"), what="the model to unload")
    assert _control(client, op="ready", name="loaded") == {"value": False}
