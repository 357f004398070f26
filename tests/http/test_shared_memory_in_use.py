"""A system shared memory region an inference uses cannot be unregistered
over HTTP, as in Triton 2.51: the request holds every region it names (its
inputs' and its outputs') until it ends; unregistering one of them meanwhile
is a 500, "Cannot unregister shared memory region 'NAME', it is currently in
use.", and unregistering all of them removes the others and is a 500 that
lists those in use. The region stays registered (mapped, on Triton) until
the inference ends; the output is written into it then, and it can be
unregistered once the response is out.

The inference is held by the `gate` Python model, which waits until the test
creates a file: no timing is involved."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from helpers import Http, expect_error, wait_for
from models import model_source
from python_models import PyModel, config, serve

SIZE = 4096  # a page: registered offsets must be page multiples on Triton
DATA = np.arange(16, dtype=np.int32)


@pytest.fixture(scope="module")
def gate_server(tmp_path_factory):
    """(server, gate path): a server whose `gate` model holds each execution
    until the file at the gate path exists."""
    folder = tmp_path_factory.mktemp("shm_in_use")
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


@pytest.fixture
def regions(gate_server):
    """Registers "in" (holding DATA), "out" and "idle", each its own object;
    yields {name: handle}; unregisters and destroys them afterwards."""
    server, _ = gate_server
    client = httpclient.InferenceServerClient(server.url)
    handles = {}
    for name in ("in", "out", "idle"):
        key = f"/oxiserve_in_use_{os.getpid()}_{name}"
        handles[name] = shm.create_shared_memory_region(name, key, SIZE)
        client.register_system_shared_memory(name, key, SIZE)
    shm.set_shared_memory_region(handles["in"], [DATA])
    yield handles
    try:
        client.unregister_system_shared_memory()
    finally:
        for handle in handles.values():
            shm.destroy_shared_memory_region(handle)
        client.close()


def _infer(url):
    """One inference reading INPUT0 from "in" and writing OUTPUT0 to "out"."""
    client = httpclient.InferenceServerClient(url, network_timeout=600)
    try:
        inp = httpclient.InferInput("INPUT0", [len(DATA)], "INT32")
        inp.set_shared_memory("in", DATA.nbytes)
        out = httpclient.InferRequestedOutput("OUTPUT0", binary_data=True)
        out.set_shared_memory("out", DATA.nbytes)
        return client.infer("gate", [inp], outputs=[out]).get_response()
    finally:
        client.close()


def test_regions_in_use_are_not_unregistered(gate_server, regions):
    server, gate = gate_server
    started = gate.parent / "gate.started"
    for path in (gate, started):
        path.unlink(missing_ok=True)
    client = httpclient.InferenceServerClient(server.url)
    with ThreadPoolExecutor(1) as pool, Http(server.url) as http:
        pending = pool.submit(_infer, server.url)
        try:
            wait_for(lambda: started.exists() or pending.done(),
                     timeout=120, what="the gate model to start executing")
            assert not pending.done(), pending.result()
            for name in ("in", "out"):
                expect_error(
                    http.post(f"/v2/systemsharedmemory/region/{name}/unregister"),
                    500,
                    f"Cannot unregister shared memory region '{name}', it is currently in use.",
                )
                with pytest.raises(InferenceServerException) as info:
                    client.unregister_system_shared_memory(name)
                assert info.value.message() == (
                    f"Cannot unregister shared memory region '{name}', it is currently in use."
                )
            # Unregistering all removes the idle region and keeps the others.
            message = expect_error(http.post("/v2/systemsharedmemory/unregister"), 500)
            assert message == (
                "Failed to unregister the following system shared memory regions: in ,out ,"
            )
            names = [r["name"] for r in client.get_system_shared_memory_status()]
            assert names == ["in", "out"]
            assert not pending.done()
        finally:
            gate.touch()
        response = pending.result(timeout=300)
    client.close()
    output = response["outputs"][0]
    assert output["shape"] == [len(DATA)] and "data" not in output, response
    # The region was still there for the output.
    np.testing.assert_array_equal(
        shm.get_contents_as_numpy(regions["out"], np.int32, [len(DATA)]), DATA)
    # Once the response is out, the regions are free.
    with Http(server.url) as http:
        for name in ("in", "out"):
            resp = http.post(f"/v2/systemsharedmemory/region/{name}/unregister")
            assert (resp.status_code, resp.text) == (200, ""), name
            expect_error(
                http.get(f"/v2/systemsharedmemory/region/{name}/status"),
                404,
                f"Unable to find system shared memory region: '{name}'",
            )


def test_unused_regions_unregister_as_before(gate_server, regions):
    """No inference: every region unregisters, one by one and all at once."""
    server, _ = gate_server
    with Http(server.url) as http:
        resp = http.post("/v2/systemsharedmemory/region/idle/unregister")
        assert (resp.status_code, resp.text) == (200, "")
        resp = http.post("/v2/systemsharedmemory/unregister")
        assert (resp.status_code, resp.text) == (200, "")
        assert http.get("/v2/systemsharedmemory/status").json() == []
