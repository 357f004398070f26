"""The model repository extension over gRPC (explicit model control):
RepositoryIndex, RepositoryModelLoad, RepositoryModelUnload."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2

from catalog import no_backend_model
from grpc_helpers import Stub, expect_grpc_error, expect_rpc_error, infer_input
from helpers import wait_for
from models import identity, write_repository
from servers import TARGET, Server


@pytest.fixture(scope="module")
def explicit(tmp_path_factory):
    specs = [identity(n, "INT32") for n in ("gx_a", "gx_b", "gx_never")]
    specs.append(no_backend_model())
    repo = write_repository(tmp_path_factory.mktemp("grpc_explicit"), specs, TARGET)
    flags = ["--model-control-mode=explicit", "--load-model=gx_a"]
    with Server(repo, flags) as server:
        client = grpcclient.InferenceServerClient(server.grpc_url)
        stub = Stub(server.grpc_url)
        yield client, stub
        stub.close()
        client.close()


def _index(client, ready=False):
    return {m["name"]: m for m in client.get_model_repository_index(as_json=True).get("models", [])
            if not ready or m.get("state") == "READY"}


def _infer(client, model):
    array = np.array([[1, 2, 3]], dtype=np.int32)
    return client.infer(model, [infer_input("INPUT0", array, "INT32")])


def test_index_lists_every_model(explicit):
    client, _ = explicit
    index = _index(client)
    assert sorted(index) == ["gx_a", "gx_b", "gx_never", "nobackend"]
    assert index["gx_a"] == {"name": "gx_a", "version": "1", "state": "READY"}
    assert index["gx_never"] == {"name": "gx_never"}


def test_index_of_ready_models(explicit):
    _, stub = explicit
    response = stub.RepositoryIndex(service_pb2.RepositoryIndexRequest(ready=True))
    assert [m.name for m in response.models] == ["gx_a"]


def test_load_infer_unload(explicit):
    client, _ = explicit
    client.load_model("gx_b")
    assert client.is_model_ready("gx_b")
    assert _infer(client, "gx_b").as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]
    client.unload_model("gx_b")

    def unloaded():
        entry = _index(client)["gx_b"]
        return entry if entry.get("state") == "UNAVAILABLE" else None

    entry = wait_for(unloaded, what="gx_b to unload")
    assert entry["reason"] == "unloaded"
    assert not client.is_model_ready("gx_b")
    expect_grpc_error(
        lambda: _infer(client, "gx_b"),
        "NOT_FOUND",
        "Request for unknown model: 'gx_b' has no available versions",
    )


def test_load_of_an_unknown_model(explicit):
    client, _ = explicit
    expect_grpc_error(
        lambda: client.load_model("no_such_model"),
        "INTERNAL",
        "failed to load 'no_such_model', failed to poll from model repository",
    )
    assert client.is_server_live()


def test_load_of_a_failing_model(explicit):
    client, _ = explicit
    expect_grpc_error(lambda: client.load_model("nobackend"), "INVALID_ARGUMENT", "nobackend")
    assert client.is_model_ready("gx_a")


def test_repository_name_is_not_supported(explicit):
    _, stub = explicit
    expect_rpc_error(
        lambda: stub.RepositoryIndex(service_pb2.RepositoryIndexRequest(repository_name="r")),
        "UNIMPLEMENTED",
        "'repository_name' specification is not supported",
    )


def _load(model, key, **value):
    request = service_pb2.RepositoryModelLoadRequest(model_name=model)
    request.parameters[key].CopyFrom(service_pb2.ModelRepositoryParameter(**value))
    return request


def test_load_parameters_are_checked(explicit):
    _, stub = explicit
    expect_rpc_error(
        lambda: stub.RepositoryModelLoad(_load("gx_b", "nope", bool_param=True)),
        "INVALID_ARGUMENT",
        "unrecognized load parameter 'nope'.",
    )
    expect_rpc_error(
        lambda: stub.RepositoryModelLoad(_load("gx_b", "config", bool_param=True)),
        "INVALID_ARGUMENT",
        "invalid value type for load parameter 'config', expected string_param.",
    )
    expect_rpc_error(
        lambda: stub.RepositoryModelLoad(_load("gx_b", "file:1/model.py", string_param="x")),
        "INVALID_ARGUMENT",
        "invalid value type for load parameter 'file:1/model.py', expected bytes_param.",
    )


def test_unload_dependents_must_be_a_bool(explicit):
    _, stub = explicit
    request = service_pb2.RepositoryModelUnloadRequest(model_name="gx_never")
    request.parameters["unload_dependents"].CopyFrom(
        service_pb2.ModelRepositoryParameter(string_param="yes")
    )
    expect_rpc_error(
        lambda: stub.RepositoryModelUnload(request),
        "INVALID_ARGUMENT",
        "invalid value type for 'unload_dependents' parameter, expected bool_param.",
    )


def test_load_and_unload_refused_without_explicit_mode(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.load_model("id_fp32"),
        "UNAVAILABLE",
        "explicit model load / unload is not allowed if polling is enabled",
    )
    expect_grpc_error(lambda: grpc_client.unload_model("id_fp32"), "UNAVAILABLE", "explicit")
    assert grpc_client.is_model_ready("id_fp32")
