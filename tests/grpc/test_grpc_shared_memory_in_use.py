"""A system shared memory region an inference uses cannot be unregistered
over gRPC, as in Triton 2.51: while a gRPC inference reads from one region
and writes into another, unregistering either is INTERNAL "Cannot unregister
shared memory region 'NAME', it is currently in use.", and unregistering all
of them removes the others and is INTERNAL with those in use listed. The
regions stay until the inference ends, which writes its output into one.

The inference is held by the `gate` Python model, which waits until the test
creates a file: no timing is involved."""

import os
import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm

from grpc_helpers import expect_grpc_error
from helpers import wait_for
from models import model_source
from python_models import PyModel, config, serve
from servers import TARGET

SIZE = 4096
DATA = np.arange(16, dtype=np.int32)


@pytest.fixture(scope="module")
def gate_server(tmp_path_factory):
    """(server, gate path): a server whose `gate` model holds each execution
    until the file at the gate path exists."""
    folder = tmp_path_factory.mktemp("grpc_shm_in_use")
    gate = folder / "gate"
    model = PyModel(
        "gate",
        model_source("gate"),
        config(
            [("INPUT0", "INT32", [-1])],
            [("OUTPUT0", "INT32", [-1])],
            extra=f'parameters [ {{ key: "gate", value: {{ string_value: "{gate}" }} }} ]\n',
        ),
    )
    with serve(folder / "repo", [model]) as server:
        yield server, gate


def _unregister_after(client, name):
    """Unregisters `name` once the response is out. oxiserve lets go of a
    request's regions before it answers; Triton's gRPC frontend may hold an
    output region a moment longer, so on Triton this retries."""
    tries = 1 if TARGET == "oxiserve" else 50
    for attempt in range(tries):
        try:
            return client.unregister_system_shared_memory(name)
        except Exception as e:  # noqa: BLE001 - InferenceServerException
            if attempt == tries - 1 or "currently in use" not in str(e):
                raise
        threading.Event().wait(0.1)


def test_regions_in_use_are_not_unregistered(gate_server):
    server, gate = gate_server
    started = gate.parent / "gate.started"
    for path in (gate, started):
        path.unlink(missing_ok=True)
    client = grpcclient.InferenceServerClient(server.grpc_url)
    handles = {}
    for name in ("in", "out", "idle"):
        key = f"/oxiserve_grpc_in_use_{os.getpid()}_{name}"
        handles[name] = shm.create_shared_memory_region(name, key, SIZE)
        client.register_system_shared_memory(name, key, SIZE)
    shm.set_shared_memory_region(handles["in"], [DATA])
    done = threading.Event()
    results = []

    def callback(result, error):
        results.append((result, error))
        done.set()

    try:
        inp = grpcclient.InferInput("INPUT0", [len(DATA)], "INT32")
        inp.set_shared_memory("in", DATA.nbytes)
        out = grpcclient.InferRequestedOutput("OUTPUT0")
        out.set_shared_memory("out", DATA.nbytes)
        client.async_infer("gate", [inp], callback, outputs=[out])
        try:
            wait_for(lambda: started.exists() or done.is_set(), timeout=120,
                     what="the gate model to start executing")
            assert not done.is_set(), results
            for name in ("in", "out"):
                message = expect_grpc_error(
                    lambda: client.unregister_system_shared_memory(name), "INTERNAL")
                assert message == (
                    f"Cannot unregister shared memory region '{name}', it is currently in use."
                )
            message = expect_grpc_error(
                lambda: client.unregister_system_shared_memory(), "INTERNAL")
            assert message == (
                "Failed to unregister the following system shared memory regions: in ,out ,"
            )
            status = client.get_system_shared_memory_status(as_json=True)
            assert sorted(status["regions"]) == ["in", "out"]
            assert not done.is_set()
        finally:
            gate.touch()
        assert done.wait(300), "no response"
        result, error = results[0]
        assert error is None, error
        assert result.get_response().outputs[0].shape == [len(DATA)]
        np.testing.assert_array_equal(
            shm.get_contents_as_numpy(handles["out"], np.int32, [len(DATA)]), DATA)
        for name in ("in", "out"):
            _unregister_after(client, name)
            expect_grpc_error(
                lambda: client.get_system_shared_memory_status(region_name=name),
                "NOT_FOUND",
                f"Unable to find system shared memory region: '{name}'",
            )
    finally:
        try:
            client.unregister_system_shared_memory()
        finally:
            for handle in handles.values():
                shm.destroy_shared_memory_region(handle)
            client.close()
