"""gRPC health, server and model metadata, and model configuration."""

import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2

from grpc_helpers import Stub, expect_grpc_error, expect_rpc_error
from helpers import IDENTITY_BACKEND


def test_server_is_live_and_ready(grpc_client):
    assert grpc_client.is_server_live()
    assert grpc_client.is_server_ready()


def test_model_ready_by_version(grpc_client):
    assert grpc_client.is_model_ready("id_fp32")
    assert grpc_client.is_model_ready("id_fp32", "1")
    assert not grpc_client.is_model_ready("id_fp32", "7")
    assert not grpc_client.is_model_ready("no_such_model")
    assert grpc_client.is_model_ready("versioned", "2")


def test_model_ready_with_a_malformed_version_is_invalid(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.is_model_ready("id_fp32", "abc"),
        "INVALID_ARGUMENT",
        "failed to get model version from specified version string 'abc'",
    )
    expect_grpc_error(
        lambda: grpc_client.is_model_ready("id_fp32", "-1"),
        "INVALID_ARGUMENT",
        "invalid model version specified '-1'",
    )


def test_server_metadata(grpc_client, target):
    metadata = grpc_client.get_server_metadata(as_json=True)
    assert metadata["name"] == "triton"
    assert metadata["version"]
    for extension in ["model_repository", "model_configuration", "statistics", "logging"]:
        assert extension in metadata["extensions"]


def test_model_metadata(grpc_client):
    metadata = grpc_client.get_model_metadata("id_int16", as_json=True)
    assert metadata["name"] == "id_int16"
    assert metadata["versions"] == ["1"]
    assert metadata["platform"] == IDENTITY_BACKEND
    assert metadata["inputs"] == [{"name": "INPUT0", "datatype": "INT16", "shape": ["-1", "-1"]}]
    assert metadata["outputs"] == [{"name": "OUTPUT0", "datatype": "INT16", "shape": ["-1", "-1"]}]


def test_model_metadata_lists_every_ready_version(grpc_client):
    metadata = grpc_client.get_model_metadata("versioned")
    assert sorted(metadata.versions) == ["1", "2", "3"]
    metadata = grpc_client.get_model_metadata("versioned", "2")
    assert list(metadata.versions) == ["2"]


def test_model_metadata_of_unknown_models(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.get_model_metadata("no_such_model"),
        "NOT_FOUND",
        "Request for unknown model: 'no_such_model' is not found",
    )
    expect_grpc_error(
        lambda: grpc_client.get_model_metadata("id_fp32", "9"),
        "NOT_FOUND",
        "Request for unknown model: 'id_fp32' version 9 is not found",
    )


def test_model_config_is_the_complete_configuration(grpc_client, http):
    config = grpc_client.get_model_config("id_fp32", as_json=True)["config"]
    assert config["name"] == "id_fp32"
    assert config["backend"] == IDENTITY_BACKEND
    assert config["max_batch_size"] == 8
    assert config["input"][0]["data_type"] == "TYPE_FP32"
    assert config["input"][0]["dims"] == ["-1"]
    assert config["version_policy"] == {"latest": {"num_versions": 1}}
    # The same configuration as HTTP returns.
    http_config = http.get("/v2/models/id_fp32/config").json()
    assert config["instance_group"][0]["count"] == http_config["instance_group"][0]["count"]
    assert config["instance_group"][0]["kind"] == http_config["instance_group"][0]["kind"]


def test_model_config_of_an_unknown_model(grpc_client):
    expect_grpc_error(
        lambda: grpc_client.get_model_config("no_such_model"),
        "NOT_FOUND",
        "no_such_model",
    )


@pytest.fixture
def stub(main_server):
    s = Stub(main_server.grpc_url)
    yield s
    s.close()


def test_standard_health_check(stub):
    """grpc.health.v1.Health/Check with an empty request: SERVING (status 1)."""
    check = stub.channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=lambda raw: raw,
        response_deserializer=lambda raw: raw,
    )
    assert check(b"") == b"\x08\x01"


def test_metadata_rpcs_on_a_raw_stub(stub):
    live = stub.ServerLive(service_pb2.ServerLiveRequest())
    assert live.live
    ready = stub.ModelReady(service_pb2.ModelReadyRequest(name="id_fp32", version=""))
    assert ready.ready
    expect_rpc_error(
        lambda: stub.ModelMetadata(service_pb2.ModelMetadataRequest(name="id_fp32", version="x")),
        "INVALID_ARGUMENT",
        "version string 'x'",
    )


def test_a_client_per_call_sees_the_same_server(main_server):
    with grpcclient.InferenceServerClient(main_server.grpc_url) as client:
        assert client.is_server_live()
