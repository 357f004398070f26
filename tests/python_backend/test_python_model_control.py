"""pb_utils.load_model / unload_model / is_model_ready from a Python model, as Triton
2.51's Python backend runs them (after Triton's qa/python_models/bls_model_loading):
load, unload and readiness; a load with a configuration override, then with override
files; unload_dependents for an ensemble's member; a load from `initialize`; a model
unloading itself; and the errors, raised in the model as TritonModelException with
Triton's text, the server serving on. In the default (`none`) control mode loads and
unloads are refused."""

import json

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import wait_for
from models import model_source
from python_models import PyModel, config, serve, tensors

CONTROLLER = PyModel(
    "controller",
    model_source("model_control"),
    config([("COMMAND", "BYTES", [1])], [("RESULT", "BYTES", [1])]),
)

HELPER_IO = config([("INPUT0", "FP32", [1])], [("OUTPUT0", "FP32", [1])])
# Versions 2 and 3 (Triton's test serves onnx_int32_int32_int32 without version 1).
HELPER = PyModel(
    "helper",
    model_source("identity"),
    HELPER_IO + "version_policy: { all { } }\n",
    versions=(2, 3),
)
# The same configuration as JSON, for overrides.
HELPER_JSON = {
    "backend": "python",
    "max_batch_size": 0,
    "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
    "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1]}],
}

ENSEMBLE = PyModel(
    "ens",
    "",
    'platform: "ensemble"\n'
    + tensors("input", ("INPUT0", "FP32", [1]))
    + tensors("output", ("OUTPUT0", "FP32", [1]))
    + """ensemble_scheduling { step [ {
  model_name: "helper"
  model_version: -1
  input_map { key: "INPUT0" value: "INPUT0" }
  output_map { key: "OUTPUT0" value: "OUTPUT0" }
} ] }
""",
    backend_line=False,
)

LOADER_CONFIG = config([], [("RESULT", "BYTES", [1])]).replace("input [\n  \n]\n", "")
LOADER = PyModel("loads_in_initialize", model_source("loads_in_initialize"), LOADER_CONFIG)
# The same model, loading itself.
SELF_LOADER = PyModel(
    "loads_itself",
    model_source("loads_in_initialize"),
    LOADER_CONFIG + 'parameters { key: "target" value: { string_value: "loads_itself" } }\n',
)

# How Triton's stub words a failure of the server.
FAILED = "TritonModelException: Failed to %s: Failed to process the request for model " \
         "'controller_0_0', message: "


def control(client, **command):
    tensor = httpclient.InferInput("COMMAND", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([json.dumps(command).encode()], dtype=np.object_))
    result = client.infer("controller", [tensor])
    return json.loads(result.as_numpy("RESULT")[0])


def ready(client, name, version=""):
    return control(client, op="ready", name=name, version=version)["value"]


def infer_helper(client, name="helper"):
    tensor = httpclient.InferInput("INPUT0", [1], "FP32")
    tensor.set_data_from_numpy(np.array([2.5], dtype=np.float32))
    return client.infer(name, [tensor]).as_numpy("OUTPUT0").tolist()


@pytest.fixture
def explicit(tmp_path):
    models = [CONTROLLER, HELPER, ENSEMBLE, LOADER]
    flags = ["--model-control-mode=explicit", "--load-model=controller"]
    with serve(tmp_path / "repo", models, flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        yield client
        client.close()


def test_load_unload_and_readiness(explicit):
    client = explicit
    assert ready(client, "helper") is False
    assert control(client, op="load", name="helper") == {"value": None}
    assert ready(client, "helper") is True
    assert ready(client, "helper", "2") is True and ready(client, "helper", "1") is False
    assert client.is_model_ready("helper")
    assert infer_helper(client) == [2.5]
    assert control(client, op="unload", name="helper") == {"value": None}
    assert ready(client, "helper") is False
    assert not client.is_model_ready("helper")
    assert ready(client, "no_such_model") is False


def test_load_with_config_override(explicit):
    client = explicit
    control(client, op="load", name="helper")
    assert ready(client, "helper", "2") and ready(client, "helper", "3")
    override = dict(HELPER_JSON, version_policy={"specific": {"versions": [2]}})
    assert control(client, op="load", name="helper", config=json.dumps(override)) == {
        "value": None}
    assert ready(client, "helper", "2") is True
    assert ready(client, "helper", "3") is False


def test_load_with_file_override(explicit):
    client = explicit
    control(client, op="load", name="helper")
    files = {"file:1/model.py": model_source("identity")}
    # A new model made of the files, under another name.
    config_json = json.dumps(HELPER_JSON)
    assert control(client, op="load", name="override_model", config=config_json,
                   files=files) == {"value": None}
    assert ready(client, "override_model", "1") is True
    assert ready(client, "override_model", "3") is False
    assert infer_helper(client, "override_model") == [2.5]
    assert ready(client, "helper", "1") is False and ready(client, "helper", "3") is True
    # The files replace the repository's model of the same name.
    control(client, op="load", name="helper", config=config_json, files=files)
    assert ready(client, "helper", "1") is True
    assert ready(client, "helper", "3") is False


@pytest.mark.oxiserve_only
def test_failed_calls_raise_and_the_server_serves_on(explicit):
    # Real Triton 2.51 aborts (boost::interprocess::lock_exception, in
    # libtriton_python.so) in about half of the model control calls that fail. In the
    # runs it survived, its texts were these, except where noted.
    client = explicit
    control(client, op="load", name="helper")
    wrong = '"parameters": {"config": {{"backend":"python"}}}'
    failed = control(client, op="load", name="helper", config=wrong)
    # (Triton's text ends "failed to poll from model repository" for this one and the
    # next two; it logs why.)
    assert failed["error"].startswith(FAILED % "load model" + "Invalid config override: ")
    files = {"file:1/model.py": model_source("identity")}
    failed = control(client, op="load", name="helper", files=files)
    assert failed["error"] == FAILED % "load model" + (
        "Load parameter 'config' must be specified for model file override")
    failed = control(client, op="load", name="helper", files={"x": "y"}, config="")
    assert failed["error"] == FAILED % "load model" + (
        "Unrecognized load parameter 'x' with type 'BYTES'")
    # Failed loads leave the model as it was.
    assert ready(client, "helper", "2") and ready(client, "helper", "3")
    failed = control(client, op="load", name="no_such_model")
    assert failed["error"] == FAILED % "load model" + (
        "failed to load 'no_such_model', failed to poll from model repository")
    failed = control(client, op="ready", name="helper", version="abc")
    assert failed["error"] == FAILED % "check model readiness" + (
        "failed to get model version from specified version string 'abc' (details: stol), "
        "version should be an integral value > 0")
    failed = control(client, op="ready", name="helper", version="-2")
    assert failed["error"] == FAILED % "check model readiness" + (
        "failed to get model version from specified version string '-2', version should be "
        "an integral value > 0")
    # The server, and the model that asked, serve on.
    assert client.is_server_live() and client.is_model_ready("controller")
    assert ready(client, "controller") is True
    assert infer_helper(client) == [2.5]


def test_unload_dependents(explicit):
    client = explicit
    assert control(client, op="load", name="ens") == {"value": None}
    assert ready(client, "ens") and ready(client, "helper")
    control(client, op="unload", name="ens")
    assert ready(client, "ens") is False
    assert ready(client, "helper") is True
    control(client, op="load", name="ens")
    control(client, op="unload", name="helper")
    control(client, op="load", name="ens")
    assert ready(client, "helper") is True
    control(client, op="unload", name="ens", dependents=True)
    assert ready(client, "ens") is False
    # Unloaded as Triton unloads: it may still be finishing.
    wait_for(lambda: not ready(client, "helper"), what="helper to be unloaded")


def test_a_model_loads_another_in_initialize(explicit):
    client = explicit
    client.load_model("loads_in_initialize")
    result = client.infer("loads_in_initialize", [])
    assert result.as_numpy("RESULT")[0] == b"False,loaded,True"
    assert client.is_model_ready("helper")


@pytest.mark.oxiserve_only
def test_a_load_in_initialize_needs_no_free_load_thread(tmp_path):
    # Real Triton 2.51 hangs here (no answer after 40 s): the load in `initialize`
    # waits for the one load thread, which the load of the asking model holds.
    models = [CONTROLLER, HELPER, LOADER]
    flags = ["--model-control-mode=explicit", "--model-load-thread-count=1",
             "--load-model=loads_in_initialize"]
    with serve(tmp_path / "repo", models, flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        result = client.infer("loads_in_initialize", []).as_numpy("RESULT")[0]
        assert result == b"False,loaded,True"
        client.close()


@pytest.mark.oxiserve_only
def test_a_model_loading_itself_in_initialize_fails_at_once(tmp_path):
    # Real Triton 2.51 hangs here (no answer after 40 s): the load waits for the model's
    # own load, which waits for `initialize`.
    flags = ["--model-control-mode=explicit", "--load-model=loads_itself"]
    with serve(tmp_path / "repo", [SELF_LOADER], flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        result = client.infer("loads_itself", []).as_numpy("RESULT")[0].decode()
        assert result == (
            "False,Failed to load model: Failed to process the request for model "
            "'loads_itself_0_0', message: load failed for model 'loads_itself': model "
            "'loads_itself' is being loaded or unloaded, and the request comes from that "
            "model, which that load or unload may wait for,False")
        client.close()


def test_a_model_unloads_itself(explicit):
    client = explicit
    assert control(client, op="unload", name="controller") == {"value": None}
    wait_for(lambda: not client.is_model_ready("controller"), what="controller unloaded")
    client.load_model("controller")
    assert ready(client, "controller") is True


@pytest.mark.oxiserve_only
def test_none_mode_refuses_loads_and_unloads(tmp_path):
    # Refusals are failed calls, which real Triton 2.51 often aborts on (see above);
    # in the runs it survived, its texts were these.
    with serve(tmp_path / "repo", [CONTROLLER, HELPER]) as server:
        client = httpclient.InferenceServerClient(server.url)
        refused = "explicit model load / unload is not allowed if polling is enabled"
        failed = control(client, op="load", name="helper")
        assert failed["error"] == FAILED % "load model" + refused
        failed = control(client, op="unload", name="helper")
        assert failed["error"] == FAILED % "unload model" + refused
        assert ready(client, "helper", "3") is True
        client.close()
