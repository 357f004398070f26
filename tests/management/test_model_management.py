"""Model management in explicit mode through tritonclient (HTTP and gRPC):
loads with a `config` override and uploaded `file:` contents, loading one
version (oxiserve only), unload_dependents, warmup, and reloads."""

import base64
import json

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, expect_error
from management_models import ENSEMBLE, LOGGING_MODEL_PY, config_json, executions, infer, logging_model
from python_models import write_repo
from servers import TARGET, Server

WARMUP = """model_warmup [ {{ name: "{name}" batch_size: {batch} count: {count}
  inputs {{ key: "INPUT0" value: {{ data_type: TYPE_INT32 dims: [ 4 ] {data} }} }} }} ]
"""


@pytest.fixture
def explicit(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    models = [
        logging_model("plain", logs / "plain", versions=(1, 2)),
        logging_model("member", logs / "member"),
        logging_model(
            "warm", logs / "warm",
            warmup=WARMUP.format(name="zeros", batch=3, count=2, data="zero_data: true"),
        ),
        logging_model(
            "cold", logs / "cold",
            warmup=WARMUP.format(name="unlucky", batch=1, count=1, data='input_data_file: "13s"'),
        ),
    ]
    repo = write_repo(tmp_path / "repo", models)
    (repo / "pipeline").mkdir()
    (repo / "pipeline" / "config.pbtxt").write_text(ENSEMBLE)
    (repo / "pipeline" / "1").mkdir()
    (repo / "cold" / "warmup").mkdir()
    (repo / "cold" / "warmup" / "13s").write_bytes((13).to_bytes(4, "little") * 4)
    with Server(repo, ["--model-control-mode=explicit"]) as server:
        client = httpclient.InferenceServerClient(server.url)
        yield server, client, repo, logs
        client.close()


def _state(client, name):
    rows = [m for m in client.get_model_repository_index() if m["name"] == name]
    return rows[0].get("state"), rows[0].get("reason", "")


def test_config_override_then_plain_reload(explicit):
    _, client, _, logs = explicit
    client.load_model("plain", config=config_json("plain", logs / "plain", max_batch_size=2))
    assert client.get_model_config("plain")["max_batch_size"] == 2
    assert infer(client, "plain") == [1, 2, 3, 4]
    # A plain load undoes the override, though the folder did not change.
    client.load_model("plain")
    assert client.get_model_config("plain")["max_batch_size"] == 8


def test_bad_config_override_keeps_the_model_serving(explicit):
    _, client, _, logs = explicit
    client.load_model("plain")
    with pytest.raises(InferenceServerException) as e:
        client.load_model("plain", config='{"max_batch_size": "many"')
    if TARGET == "oxiserve":  # Triton: "failed to poll from model repository"
        assert "Invalid config override" in str(e.value)
    with pytest.raises(InferenceServerException):
        client.load_model("plain", config=config_json("elsewhere", logs / "x"))
    assert infer(client, "plain") == [1, 2, 3, 4]


def test_uploaded_files_create_a_model(explicit):
    server, client, repo, logs = explicit
    source = LOGGING_MODEL_PY.encode()
    files = {"file:1/model.py": source}
    client.load_model("uploaded", config=config_json("uploaded", logs / "up"), files=files)
    assert infer(client, "uploaded", (5, 6, 7, 8)) == [5, 6, 7, 8]
    assert not (repo / "uploaded").exists(), "the repository is left alone"
    client.unload_model("uploaded")
    assert not client.is_model_ready("uploaded")

    # Over gRPC the files are bytes.
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    grpc.load_model("uploaded", config=config_json("uploaded", logs / "up"), files=files)
    assert client.is_model_ready("uploaded")
    grpc.close()


def test_upload_errors(explicit):
    server, _, _, logs = explicit
    with Http(server.url) as http:
        load = "/v2/repository/models/uploaded/load"
        model_py = base64.b64encode(LOGGING_MODEL_PY.encode()).decode()
        config = config_json("uploaded", logs / "up")
        # Triton answers these with "failed to poll from model repository", or
        # decodes anything, or writes outside the folder.
        if TARGET == "oxiserve":
            resp = http.post(load, {"parameters": {"file:1/model.py": model_py}})
            expect_error(resp, 400, "'config' must be specified for model file override")
            resp = http.post(load, {"parameters": {"config": config, "file:1/model.py": "@@@"}})
            expect_error(resp, 400, "file:1/model.py", "base64")
            resp = http.post(load, {"parameters": {"config": config, "file:../x": model_py}})
            expect_error(resp, 400, "must stay within the model directory")
        resp = http.post(load, {"parameters": {"config": config, "file:1/model.py": model_py}})
        assert resp.status_code == 200, resp.text


@pytest.mark.oxiserve_only
def test_load_one_version(explicit):
    server, client, _, _ = explicit
    client.load_model("plain")
    assert client.get_model_metadata("plain")["versions"] == ["2"]
    with Http(server.url) as http:
        resp = http.post("/v2/repository/models/plain/load", {"parameters": {"version": "1"}})
        assert resp.status_code == 200, resp.text
        assert client.get_model_metadata("plain")["versions"] == ["1"]
        assert infer(client, "plain") == [1, 2, 3, 4]
        resp = http.post("/v2/repository/models/plain/load", {"parameters": {"version": "9"}})
        expect_error(resp, 400, "version 9", "versions there: 1, 2")
        resp = http.post("/v2/repository/models/plain/load", {"parameters": {"version": "two"}})
        expect_error(resp, 400, "'version' must be a version number")
    assert client.get_model_metadata("plain")["versions"] == ["1"]
    grpc = grpcclient.InferenceServerClient(server.grpc_url)
    # tritonclient sends only config and files; the raw stub sends the version.
    from tritonclient.grpc import service_pb2

    request = service_pb2.RepositoryModelLoadRequest(model_name="plain")
    request.parameters["version"].int64_param = 2
    grpc._client_stub.RepositoryModelLoad(request)
    assert client.get_model_metadata("plain")["versions"] == ["2"]
    grpc.close()


def test_unload_dependents(explicit):
    _, client, _, _ = explicit
    client.load_model("pipeline")
    assert client.is_model_ready("member"), "loaded along with the ensemble"
    client.unload_model("pipeline", unload_dependents=True)
    assert not client.is_model_ready("pipeline")
    assert not client.is_model_ready("member")

    client.load_model("member")
    client.load_model("pipeline")
    client.unload_model("pipeline", unload_dependents=True)
    assert client.is_model_ready("member"), "loaded on its own, so it stays"


def test_warmup_runs_before_ready(explicit):
    _, client, _, logs = explicit
    client.load_model("warm")
    # Two iterations of one batch of 3 requests, before any client request.
    assert executions(logs / "warm") == [3, 3]
    assert infer(client, "warm") == [1, 2, 3, 4]
    assert executions(logs / "warm") == [3, 3, 1]


@pytest.mark.oxiserve_only  # real Triton 2.51 never answers this load (client timeout)
def test_failing_warmup_leaves_the_model_unavailable(explicit):
    _, client, _, logs = explicit
    with pytest.raises(InferenceServerException) as e:
        client.load_model("cold")
    assert "thirteen is unlucky" in str(e.value)
    assert not client.is_model_ready("cold")
    state, reason = _state(client, "cold")
    assert state == "UNAVAILABLE"
    assert "failed to run warmup sample 'unlucky'" in reason
    assert "thirteen is unlucky" in reason


def test_loading_a_loaded_model_reloads_it(explicit):
    """As in Triton, even when nothing changed (and warmup runs again)."""
    _, client, _, logs = explicit
    client.load_model("warm")
    client.load_model("warm")
    assert executions(logs / "warm") == [3, 3, 3, 3]


def test_load_parameters_over_http_must_be_strings(explicit):
    server, _, _, _ = explicit
    with Http(server.url) as http:
        resp = http.post("/v2/repository/models/plain/load", {"parameters": {"config": 7}})
        assert resp.status_code in (400, 500), resp.text
        assert "error" in resp.json()
        resp = http.post(
            "/v2/repository/models/plain/load", {"parameters": {"nope": json.dumps({})}}
        )
        assert resp.status_code in (400, 500), resp.text
