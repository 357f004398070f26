"""Triton's SageMaker endpoint (--allow-sagemaker): GET /ping, POST
/invocations on SAGEMAKER_TRITON_DEFAULT_MODEL_NAME with SageMaker's
binary+json content type, and the multi-model endpoint (/models: load
an archive, list, get, invoke, unload)."""

import json

import pytest
import requests
import tritonclient.http as httpclient

from frontends import (
    SAGEMAKER_STARTED, binary_request, echo_model, generator_model, run_until, sagemaker,
    sse_events,
)
from helpers import expect_error
from models import write_model
from python_models import INIT_FAILS_PY, plain_model, write_repo
from servers import TARGET, run_to_exit

MIME = "application/vnd.sagemaker-triton.binary+json;json-header-size="
TEXT_BODY = {"inputs": [{"name": "TEXT", "shape": [1], "datatype": "BYTES", "data": ["hi"]}]}


# An ensemble of one step: TEXT -> the echo model "step" -> ANSWER.
PIPELINE = """name: "pipeline"
platform: "ensemble"
max_batch_size: 0
input [ { name: "TEXT", data_type: TYPE_STRING, dims: [ 1 ] } ]
output [ { name: "ANSWER", data_type: TYPE_STRING, dims: [ 1 ] } ]
ensemble_scheduling { step [ { model_name: "step", model_version: -1,
  input_map { key: "TEXT", value: "TEXT" }, output_map { key: "OUT_TEXT", value: "ANSWER" } } ] }
"""


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """Model archives as SageMaker unpacks them: <hash>/model/<folder>; the
    archive "ensemble" holds an ensemble and its member."""
    root = tmp_path_factory.mktemp("archives")
    for archive, folder in [("a1", "inner"), ("a2", "other")]:
        write_model(root / archive / "model", echo_model(folder), TARGET)
    ensemble = root / "ensemble" / "model"
    write_model(ensemble, echo_model("step"), TARGET)
    (ensemble / "pipeline" / "1").mkdir(parents=True)
    (ensemble / "pipeline" / "config.pbtxt").write_text(PIPELINE)
    return root


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    repo = write_repo(tmp_path_factory.mktemp("sagemaker"), [echo_model()])
    flags = ["--model-control-mode=explicit", "--load-model=echo"]
    started = sagemaker(repo, flags, SAGEMAKER_TRITON_DEFAULT_MODEL_NAME="echo")
    yield started
    started.stop()


def test_ping_reports_readiness(endpoint):
    r = requests.get(f"{endpoint.url}/ping", timeout=10)
    assert (r.status_code, r.content) == (200, b"")
    expect_error(requests.post(f"{endpoint.url}/ping", timeout=10), 405, "Method Not Allowed")


def test_invocations_run_the_default_model(endpoint):
    r = requests.post(f"{endpoint.url}/invocations", json=TEXT_BODY, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/json"
    assert r.json()["model_name"] == "echo"
    assert r.json()["outputs"][0]["data"] == ["hi"]


def test_invocations_take_and_give_binary_data(endpoint):
    body, json_size = binary_request()
    r = requests.post(f"{endpoint.url}/invocations", data=body,
                      headers={"Content-Type": f"{MIME}{json_size}"}, timeout=30)
    assert r.status_code == 200, r.text
    content_type = r.headers["Content-Type"]
    assert content_type.startswith(MIME), content_type
    assert "Inference-Header-Content-Length" not in r.headers
    result = httpclient.InferenceServerClient.parse_response_body(
        r.content, header_length=int(content_type[len(MIME):]))
    assert result.as_numpy("OUT_INTS").tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    "content_type, message",
    [
        (f"x/{MIME}10", "expect MIME type for binary data starts with"),
        (f"{MIME}-1", "inference header size should be in range"),
        (f"{MIME}100000", "inference header size should be in range"),
    ],
)
def test_bad_binary_content_types_are_refused(endpoint, content_type, message):
    r = requests.post(f"{endpoint.url}/invocations", json=TEXT_BODY,
                      headers={"Content-Type": content_type}, timeout=30)
    expect_error(r, 400, message)


def test_unknown_requests_are_bad_requests(endpoint):
    for method, path in [("GET", "/other"), ("PUT", "/models/x"), ("GET", "/v2/health/ready")]:
        r = requests.request(method, f"{endpoint.url}{path}", timeout=10)
        assert (r.status_code, r.content) == (400, b""), (method, path)
    assert requests.get(f"{endpoint.url}/invocations", timeout=10).status_code == 405


def load(endpoint, name, url, **headers):
    body = {"model_name": name, "url": str(url)}
    return requests.post(f"{endpoint.url}/models", json=body, headers=headers, timeout=120)


def test_a_model_archive_loads_lists_runs_and_unloads(endpoint, archives):
    url = archives / "a1" / "model"
    r = load(endpoint, "m1", url)
    assert r.status_code == 200, r.text
    # Loaded under the name SageMaker gives, whatever its configuration says.
    listed = requests.get(f"{endpoint.url}/models", timeout=10).json()
    assert listed == {"models": [{"modelName": "m1", "modelUrl": str(url)}]}
    got = requests.get(f"{endpoint.url}/models/m1", timeout=10).json()
    assert got == {"modelName": "m1", "modelUrl": str(url)}
    r = requests.post(f"{endpoint.url}/models/m1/invoke", json=TEXT_BODY, timeout=30)
    assert r.status_code == 200, r.text
    assert (r.json()["model_name"], r.json()["outputs"][0]["data"]) == ("m1", ["hi"])
    expect_error(load(endpoint, "m1", url), 409,
                 f"model repository '{url}' has already been registered")

    r = requests.delete(f"{endpoint.url}/models/m1", timeout=400)
    assert r.status_code == 200, r.text
    assert requests.get(f"{endpoint.url}/models", timeout=10).json() == {"models": []}
    assert requests.get(f"{endpoint.url}/models/m1", timeout=10).status_code == 404
    r = requests.post(f"{endpoint.url}/models/m1/invoke", json=TEXT_BODY, timeout=30)
    assert r.status_code == 404
    assert requests.delete(f"{endpoint.url}/models/m1", timeout=10).status_code == 404


def test_the_target_model_header_names_the_loaded_model(endpoint, archives):
    target = {"X-Amzn-SageMaker-Target-Model": "target.tar.gz"}
    r = load(endpoint, "hash2", archives / "a2" / "model", **target)
    assert r.status_code == 200, r.text
    try:
        r = requests.post(f"{endpoint.url}/models/hash2/invoke", json=TEXT_BODY,
                          headers=target, timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["model_name"] == "target.tar.gz"
    finally:
        r = requests.delete(f"{endpoint.url}/models/hash2", headers=target, timeout=400)
        assert r.status_code == 200, r.text


def test_an_archive_with_an_ensemble_loads_the_ensemble(endpoint, archives):
    r = load(endpoint, "ens", archives / "ensemble" / "model")
    assert r.status_code == 200, r.text
    try:
        r = requests.post(f"{endpoint.url}/models/ens/invoke", json=TEXT_BODY, timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["outputs"][0]["data"] == ["hi"]
    finally:
        assert requests.delete(f"{endpoint.url}/models/ens", timeout=400).status_code == 200


def test_invocation_errors_are_bad_requests(endpoint, archives):
    assert load(endpoint, "m3", archives / "a1" / "model").status_code == 200
    try:
        r = requests.post(f"{endpoint.url}/models/m3/invoke", json={"inputs": []}, timeout=30)
        expect_error(r, 400, "expected number of inputs")
        r = requests.post(f"{endpoint.url}/models/m3/invoke", data="garbage", timeout=30)
        expect_error(r, 400, "failed to parse the request JSON buffer")
    finally:
        assert requests.delete(f"{endpoint.url}/models/m3", timeout=400).status_code == 200


def test_an_archive_that_is_not_there_is_refused(endpoint, tmp_path):
    missing = tmp_path / "nowhere"
    expect_error(load(endpoint, "m4", missing), 400,
                 f"failed to register '{missing}', repository not found")
    # A model folder outside SageMaker's /opt/ml/models layout.
    write_model(tmp_path, echo_model("flat"), TARGET)
    expect_error(load(endpoint, "m5", tmp_path / "flat"), 400,
                 "failed to register '', repository not found")
    assert requests.get(f"{endpoint.url}/models", timeout=10).json() == {"models": []}


def test_without_explicit_model_control_nothing_registers(tmp_path, archives):
    repo = write_repo(tmp_path / "repo", [echo_model()])
    started = sagemaker(repo, SAGEMAKER_TRITON_DEFAULT_MODEL_NAME=None)
    try:
        expect_error(load(started, "m1", archives / "a1" / "model"), 400,
                     "repository registration is not allowed if model control mode is not "
                     "EXPLICIT")
        # Without SAGEMAKER_TRITON_DEFAULT_MODEL_NAME, Triton's placeholder name.
        r = requests.post(f"{started.url}/invocations", json=TEXT_BODY, timeout=30)
        expect_error(r, 404, "Request for unknown model: "
                     "'unspecified_SAGEMAKER_TRITON_DEFAULT_MODEL_NAME' is not found")
    finally:
        started.stop()


@pytest.mark.parametrize("mode, status", [(None, 400), ("live", 200)])
def test_ping_mode_picks_readiness_or_liveness(tmp_path, mode, status):
    # A model that fails to load: live, not ready.
    repo = write_repo(tmp_path / "repo", [plain_model("broken", INIT_FAILS_PY)])
    started = sagemaker(repo, ["--exit-on-error=false"], SAGEMAKER_TRITON_PING_MODE=mode)
    try:
        assert requests.get(f"{started.url}/ping", timeout=10).status_code == status
    finally:
        started.stop()


def test_the_safe_port_range_keeps_other_endpoints_in(tmp_path):
    repo = write_repo(tmp_path / "repo", [echo_model()])
    flags = ["--allow-sagemaker=true", "--sagemaker-safe-port-range=1-2", "--http-port=8000"]
    status, out = run_to_exit(repo, flags)
    assert status not in (0, None), out
    assert ("The server cannot listen to HTTP requests at port 8000, allowed port range is "
            "[1, 2]") in out


# SAGEMAKER_TRITON_INFERENCE_TYPE came with Triton 2.56; Triton 2.51 only infers.
@pytest.mark.oxiserve_only
@pytest.mark.parametrize("kind", ["generate", "generate_stream"])
def test_invocations_can_generate(tmp_path, kind):
    repo = write_repo(tmp_path / "repo", [generator_model()])
    started = sagemaker(repo, SAGEMAKER_TRITON_DEFAULT_MODEL_NAME="generator",
                        SAGEMAKER_TRITON_INFERENCE_TYPE=kind)
    try:
        body = {"PROMPT": "hi", "STREAM": kind == "generate_stream", "REPETITION": 2}
        r = requests.post(f"{started.url}/invocations", data=json.dumps(body), timeout=30)
        assert r.status_code == 200, r.text
        if kind == "generate":
            assert r.json()["TEXT"] == "hi"
        else:
            assert [e["TEXT"] for e in sse_events(r)] == ["hi", "hi"]
    finally:
        started.stop()


# Triton 2.51 has no SAGEMAKER_TRITON_INFERENCE_TYPE (2.56's `serve` script
# refuses an unknown one before starting Triton; oxiserve refuses it itself).
@pytest.mark.oxiserve_only
def test_an_unknown_inference_type_stops_the_start(tmp_path):
    repo = write_repo(tmp_path / "repo", [echo_model()])
    flags = ["--allow-sagemaker=true", "--sagemaker-port=0"]
    status, out = run_until(SAGEMAKER_STARTED, repo, flags,
                            SAGEMAKER_TRITON_INFERENCE_TYPE="predict")
    assert status == 1, out
    assert "Invalid SAGEMAKER_TRITON_INFERENCE_TYPE 'predict'" in out
