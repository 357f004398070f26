"""A backend written in C that answers with what the host tells it
(tests/backends/c_api/stateful.c): backend, model and instance state, the
model's config parameters, the backend's --backend-config settings, request
ids, correlation ids and parameters, response parameters, the memory manager
(and its refusal of GPU memory); where the library is found (the model's
version folder, then the model's folder, then --backend-directory); and a
library linked against libtritonserver.so, as Triton's build links them."""

import subprocess

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from c_backends import backend_directory, compile_library, install, stateful, write
from helpers import wait_for
from servers import TARGET, Server

CLIENTS = {"http": httpclient, "grpc": grpcclient}
# What a backend built by Triton's build links against. The wheel that
# real-triton.sh installs renamed Triton's own copy; oxiserve provides both.
LIBTRITONSERVER = "libtritonserver-717102f0.so" if TARGET == "triton" else "libtritonserver.so"


def _linked_library(tmp, folder):
    """libtriton_stateful.so in `folder` with a DT_NEEDED entry for
    LIBTRITONSERVER: linked against an empty stub of that name, which is
    then deleted, so the server must provide the library itself."""
    stub_dir = tmp / "stub"
    stub_dir.mkdir()
    empty = stub_dir / "empty.c"
    empty.write_text("/* nothing: a stand-in to link against */\n")
    stub = stub_dir / LIBTRITONSERVER
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{LIBTRITONSERVER}",
                    "-o", str(stub), str(empty)], check=True)
    folder.mkdir(parents=True, exist_ok=True)
    library = compile_library("stateful", folder / "libtriton_stateful.so",
                              link=["-Wl,--no-as-needed", f"-L{stub_dir}", f"-l:{LIBTRITONSERVER}"])
    stub.unlink()
    return library


def _needed(library):
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                             check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """The repository and backend folder: state_a and state_b use the
    library in --backend-directory; loc_version has copies in its version
    folder and its model folder, loc_model one in its model folder (the
    backend directory has one too); linked has the DT_NEEDED one."""
    root = tmp_path_factory.mktemp("c_api_state")
    repo, backends = root / "repo", root / "backends"
    flag = backend_directory(backends, "stateful")
    write(repo, stateful("state_a", "hello"))
    write(repo, stateful("state_b", "bonjour"))
    install("stateful", write(repo, stateful("loc_version")) / "1")
    install("stateful", repo / "loc_version")
    install("stateful", write(repo, stateful("loc_model")))
    write(repo, stateful("linked"))
    _linked_library(root, repo / "linked" / "1")
    return {"repo": repo, "backends": backends, "flag": flag}


@pytest.fixture(scope="module")
def server(layout):
    flags = [layout["flag"], "--model-control-mode=explicit",
             "--backend-config=stateful,answer=42", "--backend-config=other,answer=7"]
    with Server(layout["repo"], flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        # One at a time: the backend numbers the models in load order.
        for name in ("state_a", "state_b"):
            client.load_model(name)
        client.close()
        yield server


def _infer(clients, how, model, **kw):
    x = CLIENTS[how].InferInput("X", [1], "INT32")
    x.set_data_from_numpy(np.array([5], dtype=np.int32))
    return clients[how].infer(model, [x], **kw)


def _scalar(result, name):
    value = result.as_numpy(name)
    assert value is not None and value.shape == (1,), (name, value)
    return value[0].item() if value.dtype != object else value[0].decode()


def test_c_api_backend_model_and_instance_state(clients):
    """MODEL_INDEX counts the models the library initialized (backend
    state); COUNT the requests of the instance (instance state); a reloaded
    model is a new model with a new instance."""
    a1, a2 = (_infer(clients, "http", "state_a") for _ in range(2))
    b1 = _infer(clients, "grpc", "state_b")
    assert [(_scalar(r, "MODEL_INDEX"), _scalar(r, "COUNT")) for r in (a1, a2, b1)] == [
        (1, 1), (1, 2), (2, 1)]
    client = clients["http"]
    client.unload_model("state_a")
    wait_for(lambda: not client.is_model_ready("state_a"), what="state_a to unload")
    client.load_model("state_a")
    again = _infer(clients, "http", "state_a")
    assert (_scalar(again, "MODEL_INDEX"), _scalar(again, "COUNT")) == (3, 1)
    assert _scalar(again, "MODEL") == "state_a:1"


def _response_parameters(result, how):
    if how == "http":
        return result.get_response()["parameters"]
    params = result.get_response().parameters
    return {key: getattr(value, value.WhichOneof("parameter_choice"))
            for key, value in params.items()}


@pytest.mark.parametrize("how", ["http", "grpc"])
def test_c_api_config_ids_and_parameters(clients, how):
    """What the backend read: its model's config parameter, its
    --backend-config setting (not another backend's), the request's id,
    correlation id and parameters; what it set: response parameters."""
    sent = {"color": "red", "n": 3, "flag": True, "ratio": 0.5}
    first = _infer(clients, how, "state_b", request_id=f"req-{how}", sequence_id=99,
                   parameters=sent)
    second = _infer(clients, how, "state_b")
    assert _scalar(first, "MODEL") == "state_b:1"
    assert _scalar(first, "GREETING") == "bonjour"
    assert _scalar(first, "CMDLINE") == "42"
    assert _scalar(first, "REQUEST_ID") == f"req-{how}"
    assert _scalar(first, "CORRELATION_ID") == 99
    assert sorted(v.decode() for v in first.as_numpy("PARAMETERS")) == [
        "color=string:red", "flag=bool:true", "n=int:3", "ratio=double:0.5"]
    assert _scalar(second, "REQUEST_ID") == ""
    assert _scalar(second, "CORRELATION_ID") == 0
    assert second.as_numpy("PARAMETERS").tolist() == []
    count = _scalar(first, "COUNT")
    assert _scalar(second, "COUNT") == count + 1
    assert _response_parameters(first, how) == {
        "greeting": "bonjour", "count": count, "stateful": True, "ratio": 0.25}


def test_c_api_gpu_memory_is_refused(clients):
    """The backend memory manager gives CPU memory (the BYTES outputs are
    built in it) and refuses GPU memory on this host."""
    assert _scalar(_infer(clients, "http", "state_b"), "GPU_REFUSED") is True


@pytest.mark.parametrize("model,where", [
    ("loc_version", "version folder"),
    ("loc_model", "model folder"),
    ("state_b", "backend directory"),
])
def test_c_api_library_search_order(server, layout, clients, model, where):
    """The library is taken from the first of: the model's version folder,
    the model's folder, <--backend-directory>/<backend>/; each copy is a
    backend of its own (its own model count) with the same backend config."""
    expected = {
        "version folder": layout["repo"] / "loc_version" / "1",
        "model folder": layout["repo"] / "loc_model",
        "backend directory": layout["backends"] / "stateful",
    }[where]
    client = clients["http"]
    if not client.is_model_ready(model):
        client.load_model(model)
    result = _infer(clients, "http", model)
    assert _scalar(result, "LOCATION") == str(expected)
    assert _scalar(result, "CMDLINE") == "42"
    if model != "state_b":
        assert _scalar(result, "MODEL_INDEX") == 1


def test_c_api_library_linked_against_libtritonserver(layout, clients):
    """A library with DT_NEEDED libtritonserver.so (as Triton's build links
    backends) loads with no stub left on disk: the server provides it."""
    library = layout["repo"] / "linked" / "1" / "libtriton_stateful.so"
    assert LIBTRITONSERVER in _needed(library)
    client = clients["http"]
    client.load_model("linked")
    result = _infer(clients, "grpc", "linked")
    assert _scalar(result, "MODEL") == "linked:1"
    assert _scalar(result, "LOCATION") == str(library.parent)
    assert _scalar(result, "MODEL_INDEX") == 1
