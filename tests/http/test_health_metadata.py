"""Health, server metadata, model readiness, model metadata and model config."""

import pytest
from tritonclient.utils import InferenceServerException

from helpers import IDENTITY_BACKEND, expect_error

EXTENSIONS = [
    "classification",
    "model_repository",
    "model_configuration",
    "binary_tensor_data",
    "parameters",
    "statistics",
    "logging",
]


def test_live_and_ready(client, http):
    assert client.is_server_live()
    assert client.is_server_ready()
    for path in ("/v2/health/live", "/v2/health/ready"):
        assert http.get(path).status_code == 200, path


@pytest.mark.oxiserve_only
def test_port_zero_reports_the_bound_port(main_server):
    """--http-port=0: the Started line names the port really bound."""
    assert "--http-port=0" in main_server.proc.args
    assert main_server.port > 0
    assert f"Started HTTPService at 0.0.0.0:{main_server.port}" in main_server.output()


def test_server_metadata(client, http):
    meta = client.get_server_metadata()
    assert meta["name"] == "triton"  # --id's default
    assert isinstance(meta["version"], str) and meta["version"]
    for ext in EXTENSIONS:
        assert ext in meta["extensions"], ext
    assert http.get("/v2").json() == meta


def test_model_ready(client, http):
    assert client.is_model_ready("id_int32")
    assert client.is_model_ready("id_int32", "1")
    assert client.is_model_ready("versioned", "2")
    assert http.get("/v2/models/id_int32/ready").status_code == 200
    assert http.get("/v2/models/versioned/versions/3/ready").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/v2/models/no_such_model/ready",
        "/v2/models/id_int32/versions/2/ready",
        "/v2/models/versioned/versions/9/ready",
    ],
)
def test_not_ready(client, http, path):
    """Unknown models and versions are not ready: 400 with an error body."""
    expect_error(http.get(path), 400, "not ready")
    parts = path.split("/")
    version = parts[5] if "versions" in parts else ""
    assert not client.is_model_ready(parts[3], version)


def test_model_metadata(client):
    meta = client.get_model_metadata("id_int32")
    assert meta == {
        "name": "id_int32",
        "versions": ["1"],
        "platform": IDENTITY_BACKEND,
        "inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [-1, -1]}],
        "outputs": [{"name": "OUTPUT0", "datatype": "INT32", "shape": [-1, -1]}],
    }


def test_model_metadata_no_batching(client):
    meta = client.get_model_metadata("nobatch_all")
    assert meta["inputs"][12] == {"name": "INPUT12", "datatype": "BYTES", "shape": [-1, -1]}
    assert [t["datatype"] for t in meta["outputs"]][:3] == ["BOOL", "UINT8", "UINT16"]


def test_model_metadata_versions(client):
    assert client.get_model_metadata("versioned")["versions"] == ["1", "2", "3"]
    assert client.get_model_metadata("versioned", "2")["versions"] == ["2"]


def test_model_metadata_unknown(client, http):
    expect_error(http.get("/v2/models/no_such_model"), 404, "no_such_model")
    expect_error(http.get("/v2/models/id_int32/versions/5"), 404, "id_int32")
    with pytest.raises(InferenceServerException) as err:
        client.get_model_metadata("no_such_model")
    assert "no_such_model" in str(err.value)


def test_model_config(client):
    config = client.get_model_config("classify")
    assert config["name"] == "classify"
    assert config["backend"] == IDENTITY_BACKEND
    assert config["max_batch_size"] == 8
    assert config["version_policy"] == {"latest": {"num_versions": 1}}
    (inp,) = config["input"]
    assert (inp["name"], inp["data_type"], inp["dims"]) == ("INPUT0", "TYPE_FP32", [-1])
    assert inp["optional"] is False
    (out,) = config["output"]
    assert (out["name"], out["data_type"], out["dims"]) == ("OUTPUT0", "TYPE_FP32", [-1])
    assert out["label_filename"] == "labels.txt"
    (group,) = config["instance_group"]
    assert (group["kind"], group["count"]) == ("KIND_CPU", 1)


def test_model_config_details(client, http):
    config = client.get_model_config("versioned", "2")
    assert config["version_policy"] == {"all": {}}
    config = client.get_model_config("concurrent")
    assert "dynamic_batching" in config and config["max_batch_size"] == 16
    assert http.get("/v2/models/concurrent/config").json() == config
    expect_error(http.get("/v2/models/no_such_model/config"), 404, "no_such_model")
