"""A load request's model name is one folder name: a name that is a path
(`..%2F..%2Ftmp%2Fx`, `%2Ftmp%2Fx`) is refused over HTTP and gRPC before
anything is written, so uploaded `file:` contents can never land outside
the server's own temporary model folder."""

import base64
import uuid
from pathlib import Path

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, expect_error
from management_models import LOGGING_MODEL_PY, config_json, infer, logging_model
from python_models import write_repo
from servers import Server

pytestmark = pytest.mark.oxiserve_only


@pytest.fixture(scope="module")
def explicit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    logs = tmp / "logs"
    logs.mkdir()
    repo = write_repo(tmp / "repo", [logging_model("plain", logs / "plain")])
    with Server(repo, ["--model-control-mode=explicit", "--load-model=plain"]) as server:
        yield server, logs


def _escapes():
    """(name in the URL, where an unchecked join would write) pairs under /tmp."""
    tag = uuid.uuid4().hex[:12]
    return [
        (f"..%2F..%2Ftmp%2Foxi_escape_{tag}", Path(f"/tmp/oxi_escape_{tag}")),
        (f"%2Ftmp%2Foxi_absolute_{tag}", Path(f"/tmp/oxi_absolute_{tag}")),
        ("%2E%2E", None),
    ]


def test_http_load_of_a_path_name_writes_nothing(explicit):
    server, logs = explicit
    model_py = base64.b64encode(LOGGING_MODEL_PY.encode()).decode()
    with Http(server.url) as http:
        for name, outside in _escapes():
            body = {"parameters": {
                "config": config_json("x", logs / "x"),
                "file:1/model.py": model_py,
            }}
            resp = http.post(f"/v2/repository/models/{name}/load", body)
            expect_error(resp, 400, "Invalid model name")
            if outside is not None:
                assert not outside.exists(), f"{outside} was written by a load of {name}"
        # The server keeps serving its model.
        assert infer(httpclient.InferenceServerClient(server.url), "plain") == [1, 2, 3, 4]


def test_grpc_load_of_a_path_name_writes_nothing(explicit):
    server, logs = explicit
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tag = uuid.uuid4().hex[:12]
    for name, outside in [
        (f"../../tmp/oxi_grpc_escape_{tag}", Path(f"/tmp/oxi_grpc_escape_{tag}")),
        (f"/tmp/oxi_grpc_absolute_{tag}", Path(f"/tmp/oxi_grpc_absolute_{tag}")),
    ]:
        with pytest.raises(InferenceServerException) as refused:
            client.load_model(
                name,
                config=config_json("x", logs / "x"),
                files={"file:1/model.py": LOGGING_MODEL_PY.encode()},
            )
        assert "Invalid model name" in refused.value.message(), refused.value.message()
        assert refused.value.status() == "StatusCode.INVALID_ARGUMENT"
        assert not outside.exists(), f"{outside} was written by a load of {name}"
    assert client.is_model_ready("plain")
    client.close()
