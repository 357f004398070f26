"""An ensemble follows its members, as in Triton's dependency graph:
unloading a member takes the loaded ensembles using it out of service
(UNAVAILABLE, "unloaded"), and loading the member again brings them back."""

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, wait_for
from models import identity, write_repository
from servers import TARGET, Server

ENSEMBLE = """name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: "member" model_version: -1
  input_map { key: "INPUT0" value: "INPUT0" }
  output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }
"""


@pytest.fixture
def explicit(tmp_path):
    repo = write_repository(tmp_path / "repo", [identity("member", "INT32")], TARGET)
    (repo / "ens" / "1").mkdir(parents=True)
    (repo / "ens" / "config.pbtxt").write_text(ENSEMBLE)
    flags = ["--model-control-mode=explicit", "--load-model=ens"]
    with Server(repo, flags) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        yield client, http
        client.close()


def _state(http, name):
    entry = {m["name"]: m for m in http.post("/v2/repository/index").json()}[name]
    return entry.get("state"), entry.get("reason", "")


def _infer(client):
    tensor = httpclient.InferInput("INPUT0", [1, 2], "INT32")
    tensor.set_data_from_numpy(np.array([[1, 2]], dtype=np.int32))
    return client.infer("ens", [tensor]).as_numpy("OUTPUT0")


def test_unloading_a_member_unloads_its_ensembles(explicit):
    client, http = explicit
    assert client.is_model_ready("ens")
    client.unload_model("member")
    wait_for(lambda: _state(http, "ens")[0] == "UNAVAILABLE", what="the ensemble to go")
    assert _state(http, "ens") == ("UNAVAILABLE", "unloaded")
    assert not client.is_model_ready("ens")
    with pytest.raises(InferenceServerException) as e:
        _infer(client)
    assert "Request for unknown model: 'ens' has no available versions" in str(e.value)


def test_loading_the_member_again_brings_the_ensemble_back(explicit):
    client, http = explicit
    client.unload_model("member")
    wait_for(lambda: not client.is_model_ready("ens"), what="the ensemble to go")
    client.load_model("member")
    wait_for(lambda: client.is_model_ready("ens"), what="the ensemble to come back")
    assert _state(http, "ens") == ("READY", "")
    np.testing.assert_array_equal(_infer(client), [[1, 2]])


def test_an_ensemble_unloaded_by_request_stays_unloaded(explicit):
    client, http = explicit
    client.unload_model("ens")
    client.unload_model("member")
    client.load_model("member")
    assert client.is_model_ready("member")
    assert not client.is_model_ready("ens")
