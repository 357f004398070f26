"""A version that a reload no longer serves (its version policy changed) is
kept as unloaded, as Triton keeps it: a request for it hears that the version
is not ready (503), not that it is unknown (404), and the index lists it."""

import shutil

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, wait_for
from models import identity, write_repository
from servers import TARGET, Server


@pytest.fixture
def two_versions(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity("m", "INT32")], TARGET)
    shutil.copytree(repo / "m" / "1", repo / "m" / "2")
    config = repo / "m" / "config.pbtxt"
    text = config.read_text()
    config.write_text(text + "\nversion_policy: { all { } }\n")
    flags = ["--model-control-mode=explicit", "--load-model=m"]
    with Server(repo, flags) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        yield client, http, config, text
        client.close()


def _infer(client, version):
    tensor = httpclient.InferInput("INPUT0", [1, 2], "INT32")
    tensor.set_data_from_numpy(np.array([[1, 2]], dtype=np.int32))
    return client.infer("m", [tensor], model_version=str(version))


def _settled_index(http):
    def index():
        rows = http.post("/v2/repository/index").json()
        return rows if all(r.get("state") not in ("LOADING", "UNLOADING") for r in rows) else None
    return wait_for(index, what="the index to settle")


def test_a_version_the_policy_drops_is_not_ready_not_unknown(two_versions):
    client, http, config, text = two_versions
    _infer(client, 1)
    config.write_text(text + "\nversion_policy: { specific { versions: [2] } }\n")
    client.load_model("m")
    _infer(client, 2)
    with pytest.raises(InferenceServerException) as e:
        _infer(client, 1)
    assert e.value.status() == "503"
    assert "Request for unknown model: 'm' version 1 is not at ready state" in str(e.value)
    with pytest.raises(InferenceServerException) as e:
        _infer(client, 3)
    assert e.value.status() == "404"
    assert "'m' version 3 is not found" in str(e.value)
    assert _settled_index(http) == [
        {"name": "m", "version": "1", "state": "UNAVAILABLE", "reason": "unloaded"},
        {"name": "m", "version": "2", "state": "READY"},
    ]
    assert not client.is_model_ready("m", "1")
