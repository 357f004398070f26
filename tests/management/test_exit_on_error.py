"""`--exit-on-error=false` with a repository that cannot be read, as Triton
2.51: the server stays up, answers its own APIs (metadata, logging, shared
memory), reports itself neither live nor ready, and its model and
repository APIs answer "Server not ready" (HTTP 503, gRPC UNAVAILABLE)."""

import grpc
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from helpers import Http
from servers import Server


@pytest.fixture
def failed(tmp_path):
    missing = tmp_path / "no_such_repository"
    with Server(missing, ["--exit-on-error=false"]) as server, Http(server.url) as http:
        yield server, http


def test_the_server_stays_up_neither_live_nor_ready(failed):
    _, http = failed
    assert http.get("/v2/health/live").status_code == 400
    assert http.get("/v2/health/ready").status_code == 400
    assert http.get("/v2").status_code == 200
    assert http.get("/v2/logging").status_code == 200
    assert http.get("/v2/systemsharedmemory/status").status_code == 200


@pytest.mark.parametrize("method, path", [
    ("get", "/v2/models/m"),
    ("get", "/v2/models/m/ready"),
    ("get", "/v2/models/m/config"),
    ("get", "/v2/models/stats"),
    ("post", "/v2/models/m/infer"),
    ("post", "/v2/repository/index"),
    ("post", "/v2/repository/models/m/load"),
])
def test_model_apis_answer_server_not_ready(failed, method, path):
    _, http = failed
    response = getattr(http, method)(path) if method == "get" else http.post(path, {})
    assert response.status_code == 503
    assert response.json() == {"error": "Server not ready"}


def test_grpc_model_apis_answer_server_not_ready(failed):
    server, _ = failed
    client = grpcclient.InferenceServerClient(server.grpc_url)
    assert not client.is_server_live()
    assert client.get_server_metadata().name
    for call in (lambda: client.get_model_metadata("m"),
                 lambda: client.get_model_repository_index()):
        with pytest.raises(InferenceServerException) as e:
            call()
        assert e.value.status() == str(grpc.StatusCode.UNAVAILABLE)
        assert "Server not ready" in e.value.message()
    client.close()
