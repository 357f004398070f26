"""Triton's Vertex AI endpoint: AIP_MODE=PREDICTION turns it on (and the
KServe HTTP and gRPC endpoints off), AIP_HEALTH_ROUTE reports readiness,
AIP_PREDICT_ROUTE runs the default model, and X-Vertex-Ai-Triton-Redirect
reaches the other endpoints."""

import pytest
import requests
import tritonclient.http as httpclient

from frontends import (
    VERTEX_STARTED, binary_request, echo_model, endpoint_port, run_until, vertex_ai,
)
from helpers import expect_error
from python_models import write_repo
from servers import free_port

MIME = "application/vnd.vertex-ai-triton.binary+json;json-header-size="
TEXT_BODY = {"inputs": [{"name": "TEXT", "shape": [1], "datatype": "BYTES", "data": ["hi"]}]}
REDIRECT = "X-Vertex-Ai-Triton-Redirect"
ROUTES = {"AIP_HEALTH_ROUTE": "/health", "AIP_PREDICT_ROUTE": "/predict"}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    repo = write_repo(tmp_path_factory.mktemp("vertex"), [echo_model(), echo_model("second")])
    started = vertex_ai(repo, ["--vertex-ai-default-model=echo"])
    yield started
    started.stop()


def predict(endpoint, body=TEXT_BODY, redirect=None, **kw):
    headers = kw.pop("headers", {})
    if redirect is not None:
        headers[REDIRECT] = redirect
    data = body if isinstance(body, (bytes, str)) or body is None else None
    return requests.post(f"{endpoint.url}/predict", data=data,
                         json=body if data is None and body is not None else None,
                         headers=headers, timeout=30, **kw)


def test_the_health_route_reports_readiness(endpoint):
    r = requests.get(f"{endpoint.url}/health", timeout=10)
    assert (r.status_code, r.content) == (200, b"")
    expect_error(requests.post(f"{endpoint.url}/health", timeout=10), 405, "Method Not Allowed")


def test_predictions_run_the_default_model(endpoint):
    r = predict(endpoint)
    assert r.status_code == 200, r.text
    assert r.json()["model_name"] == "echo"
    assert r.json()["outputs"][0]["data"] == ["hi"]
    assert requests.get(f"{endpoint.url}/predict", timeout=10).status_code == 405


def test_binary_data_goes_both_ways(endpoint):
    body, json_size = binary_request()
    r = predict(endpoint, body, headers={"Content-Type": f"{MIME}{json_size}"})
    assert r.status_code == 200, r.text
    # The answer is the HTTP endpoint's: the length in its own header.
    result = httpclient.InferenceServerClient.parse_response_body(
        r.content, header_length=int(r.headers["Inference-Header-Content-Length"]))
    assert result.as_numpy("OUT_INTS").tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    "content_type, message",
    [
        (f"additional-string/{MIME}10", "expect MIME type for binary data starts with"),
        (f"{MIME}-123", "inference header size should be in range"),
        (f"{MIME}12345", "inference header size should be in range"),
    ],
)
def test_bad_binary_content_types_are_refused(endpoint, content_type, message):
    r = predict(endpoint, headers={"Content-Type": content_type})
    expect_error(r, 400, message)


def test_bodies_are_never_compressed(endpoint):
    # The endpoint reads and writes bodies as they are, whatever the headers say.
    r = predict(endpoint, headers={"Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    assert "Content-Encoding" not in r.headers
    # Inference-Header-Content-Length is not read either.
    r = predict(endpoint, headers={"Inference-Header-Content-Length": "10"})
    assert r.status_code == 200, r.text


def test_a_redirect_reaches_another_model(endpoint):
    r = predict(endpoint, redirect="v2/models/second/infer")
    assert r.status_code == 200, r.text
    assert r.json()["model_name"] == "second"


@pytest.mark.parametrize(
    "target, check",
    [
        ("v2", lambda r: r.json()["name"] == "triton"),
        ("v2/health/live", lambda r: r.content == b""),
        ("v2/health/ready", lambda r: r.content == b""),
        ("v2/models/second", lambda r: r.json()["name"] == "second"),
        ("v2/models/second/versions/1/ready", lambda r: r.content == b""),
        ("v2/models/second/config", lambda r: r.json()["name"] == "second"),
        ("v2/models/second/stats", lambda r: r.json()["model_stats"][0]["name"] == "second"),
        ("v2/models/stats", lambda r: {"echo", "second"} <= {
            m["name"] for m in r.json()["model_stats"]}),
        ("v2/repository/index", lambda r: {"echo", "second"} <= {m["name"] for m in r.json()}),
        ("v2/systemsharedmemory/status", lambda r: r.json() == []),
        ("metrics", lambda r: "nv_inference_request_success" in r.text),
    ],
)
def test_redirects_reach_tritons_endpoints(endpoint, target, check):
    r = predict(endpoint, None, redirect=target)
    assert r.status_code == 200, (target, r.status_code, r.text)
    assert check(r), (target, r.text)


def test_a_redirect_to_a_model_not_ready_fails(endpoint):
    expect_error(predict(endpoint, None, redirect="v2/models/nope/ready"), 400,
                 "Model version not ready")


def test_other_redirects_are_bad_requests(endpoint):
    for target in ["v2/models/echo/generate", "v2/logging", "v2/trace/setting", "/v2", "nowhere"]:
        r = predict(endpoint, {"PROMPT": "x"}, redirect=target)
        assert (r.status_code, r.content) == (400, b""), target
    r = requests.get(f"{endpoint.url}/predict", headers={REDIRECT: "v2"}, timeout=10)
    assert (r.status_code, r.content) == (405, b"")
    r = requests.post(f"{endpoint.url}/other", timeout=10)
    assert (r.status_code, r.content) == (400, b"")


def test_prediction_mode_serves_vertex_ai_only(tmp_path):
    repo = write_repo(tmp_path / "repo", [echo_model()])
    port = endpoint_port() or free_port()
    status, out = run_until(VERTEX_STARTED, None, AIP_MODE="PREDICTION",
                            AIP_HTTP_PORT=port, AIP_STORAGE_URI=repo, **ROUTES)
    assert status is None, out
    # AIP_HTTP_PORT is the port; AIP_STORAGE_URI the repository.
    assert VERTEX_STARTED.search(out).group(1) == str(port), out
    assert "Started HTTPService" not in out and "Started GRPCInferenceService" not in out
    status, out = run_until(VERTEX_STARTED, repo, ["--allow-grpc=true"], AIP_MODE="PREDICTION",
                            AIP_HTTP_PORT=endpoint_port(), **ROUTES)
    assert status is None, out
    assert "Started GRPCInferenceService" in out and "Started HTTPService" not in out


@pytest.mark.parametrize("missing", ["AIP_PREDICT_ROUTE", "AIP_HEALTH_ROUTE"])
def test_a_missing_route_stops_the_start(tmp_path, missing):
    repo = write_repo(tmp_path / "repo", [echo_model()])
    variables = {**ROUTES, missing: None}
    flags = ["--allow-vertex-ai=true", f"--vertex-ai-port={endpoint_port()}"]
    status, out = run_until(VERTEX_STARTED, repo, flags, **variables)
    assert status == 1, out
    # Triton names the predict route API_PREDICT_ROUTE; oxiserve by its name.
    route = missing.removeprefix("AIP_")
    assert f"{route} is not defined for Vertex AI endpoint" in out, out


@pytest.mark.parametrize(
    "flags, message",
    [
        ([], "Expect the model repository contains only a single model if default model is "
             "not specified"),
        (["--vertex-ai-default-model=nope"], "Expect the default model 'nope' is loaded"),
    ],
)
def test_the_default_model_must_be_clear(tmp_path, flags, message):
    repo = write_repo(tmp_path / "repo", [echo_model(), echo_model("second")])
    flags = ["--allow-vertex-ai=true", f"--vertex-ai-port={endpoint_port()}", *flags]
    status, out = run_until(VERTEX_STARTED, repo, flags, **ROUTES)
    assert status == 1, out
    assert f"failed to start Vertex AI service: Invalid argument - {message}" in out, out
