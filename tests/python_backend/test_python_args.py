"""The `args` dict of `initialize`, returned by the model as JSON: its keys,
all strings, and `model_config` equal to what GET /v2/models/m/config says."""

import json

import numpy as np
import pytest
import tritonclient.http as httpclient

from python_models import args_model, serve


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    repo = tmp_path_factory.mktemp("py_args")
    with serve(repo, [args_model()]) as server:
        client = httpclient.InferenceServerClient(server.url)
        tensor = httpclient.InferInput("INPUT0", [1], "INT32")
        tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
        result = client.infer("args_model", [tensor])
        config = client.get_model_config("args_model")
        client.close()
    yield json.loads(result.as_numpy("ARGS")[0]), config, repo


def test_keys_are_strings(report):
    got, _, _ = report
    assert sorted(got["args"]) == [
        "model_config", "model_instance_device_id", "model_instance_kind",
        "model_instance_name", "model_name", "model_repository", "model_version",
    ]
    assert got["arg_types"] == ["str"]


def test_values(report):
    got, _, repo = report
    args = got["args"]
    assert args["model_name"] == "args_model"
    assert args["model_version"] == "1"
    assert args["model_instance_kind"] == "CPU"
    assert args["model_instance_name"] == "args_model_0_0"
    assert args["model_instance_device_id"] == "0"
    assert args["model_repository"] == str(repo / "args_model")


def test_model_config_equals_config_endpoint(report):
    got, config, _ = report
    assert json.loads(got["args"]["model_config"]) == config


def test_model_file_and_sys_path(report):
    """model.py is loaded from its place; the version folder and then the model
    folder are on sys.path (sibling modules import)."""
    got, _, repo = report
    assert got["file"] == str((repo / "args_model" / "1" / "model.py").resolve())
    path = got["sys_path"]
    version_dir, model_dir = str(repo / "args_model" / "1"), str(repo / "args_model")
    assert version_dir in path and model_dir in path
    assert path.index(model_dir) == path.index(version_dir) + 1


def test_instance_names_with_two_instances(tmp_path):
    with serve(tmp_path / "repo", [args_model("two", count=2)]) as server:
        client = httpclient.InferenceServerClient(server.url)
        tensor = httpclient.InferInput("INPUT0", [1], "INT32")
        tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
        got = json.loads(client.infer("two", [tensor]).as_numpy("ARGS")[0])
        client.close()
    assert got["args"]["model_instance_name"] in ("two_0_0", "two_0_1")
    config = json.loads(got["args"]["model_config"])
    assert config["instance_group"][0]["name"] == "two_0"
    assert config["instance_group"][0]["count"] == 2
