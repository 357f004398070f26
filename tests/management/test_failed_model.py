"""A model that fails to load (its backend does not exist): the server's
readiness, `--exit-on-error`, `--strict-readiness`, and requests to that model."""

import pytest
import tritonclient.http as httpclient

from catalog import no_backend_model
from helpers import Http, expect_error, expect_still_serving, int32_body
from models import identity, write_repository
from servers import TARGET, Server, run_to_exit


def _specs():
    return [identity("ok_model", "INT32"), no_backend_model("broken")]


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    repo = write_repository(tmp_path_factory.mktemp("failed"), _specs(), TARGET)
    with Server(repo, ["--exit-on-error=false"]) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        yield client, http
        client.close()


def test_live_but_not_ready(failed):
    """Strict readiness (the default): one unavailable model makes it not ready."""
    client, http = failed
    assert http.get("/v2/health/live").status_code == 200
    assert http.get("/v2/health/ready").status_code == 400
    assert client.is_server_live() and not client.is_server_ready()


def test_other_models_serve(failed):
    client, http = failed
    assert client.is_model_ready("ok_model")
    expect_still_serving(http, "ok_model")


def test_failed_model_state(failed):
    client, http = failed
    assert not client.is_model_ready("broken")
    expect_error(http.get("/v2/models/broken/ready"), 400, "not ready")
    entry = {m["name"]: m for m in client.get_model_repository_index()}["broken"]
    assert (entry["version"], entry["state"]) == ("1", "UNAVAILABLE")
    assert "no_such_backend" in entry["reason"]


def test_failed_model_requests(failed):
    _, http = failed
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "FP32", "data": [1.0]}]}
    expect_error(http.infer("broken", body), 404, "broken")
    expect_error(http.get("/v2/models/broken"), 404, "broken")
    expect_error(http.get("/v2/models/broken/config"), 404, "broken")
    expect_error(http.get("/v2/models/broken/stats"), 400, "broken")
    expect_still_serving(http, "ok_model")


def test_not_strict_readiness_is_ready(start_server):
    server = start_server(_specs(), "--exit-on-error=false", "--strict-readiness=false")
    with Http(server.url) as http:
        assert http.get("/v2/health/ready").status_code == 200
        assert http.get("/v2/models/broken/ready").status_code == 400
        assert http.infer("ok_model", int32_body()).status_code == 200


def test_exit_on_error_by_default(tmp_path):
    """With the default --exit-on-error=true the server exits non-zero, never serving."""
    repo = write_repository(tmp_path / "repo", _specs(), TARGET)
    status, output = run_to_exit(repo, timeout=120)
    assert status is not None, "server still running after 120 s\n" + output
    assert status != 0, output
    assert "Started HTTPService" not in output
    assert "broken" in output
