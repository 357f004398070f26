"""Explicit model control (`--model-control-mode=explicit --load-model=ex_a`):
load, unload, reload, and the errors for unknown and failing models."""

import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from catalog import no_backend_model
from helpers import Http, expect_error, expect_still_serving, int32_body, wait_for
from models import identity, write_repository
from servers import TARGET, Server


@pytest.fixture(scope="module")
def explicit(tmp_path_factory):
    specs = [identity(n, "INT32") for n in ("ex_a", "ex_b", "ex_never")]
    specs.append(no_backend_model())
    repo = write_repository(tmp_path_factory.mktemp("explicit"), specs, TARGET)
    flags = ["--model-control-mode=explicit", "--load-model=ex_a"]
    with Server(repo, flags) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        yield client, http
        client.close()


def _index(http):
    return {m["name"]: m for m in http.post("/v2/repository/index").json()}


def _settled(http, name):
    """The index entry of `name` once it is no longer loading or unloading."""
    def entry():
        m = _index(http)[name]
        return m if m.get("state") not in ("LOADING", "UNLOADING") else None
    return wait_for(entry, what=f"{name} to settle")


def test_only_listed_model_loaded_at_start(explicit):
    client, http = explicit
    index = _index(http)
    assert sorted(index) == ["ex_a", "ex_b", "ex_never", "nobackend"]
    assert index["ex_a"] == {"name": "ex_a", "version": "1", "state": "READY"}
    assert index["ex_never"] == {"name": "ex_never"}  # never loaded: name only
    assert client.is_model_ready("ex_a")
    assert not client.is_model_ready("ex_never")
    assert client.is_server_ready()


def test_infer_on_model_never_loaded(explicit):
    _, http = explicit
    expect_error(http.infer("ex_never", int32_body()), 404, "ex_never")
    expect_still_serving(http, "ex_a")


def test_unload_then_load_again(explicit):
    client, http = explicit
    client.load_model("ex_b")
    assert client.is_model_ready("ex_b")
    assert http.infer("ex_b", int32_body()).status_code == 200

    client.unload_model("ex_b")
    assert not client.is_model_ready("ex_b")
    expect_error(http.infer("ex_b", int32_body()), 404, "ex_b")
    entry = _settled(http, "ex_b")
    assert entry["state"] == "UNAVAILABLE" and entry["version"] == "1"

    client.load_model("ex_b")
    assert client.is_model_ready("ex_b")
    resp = http.infer("ex_b", int32_body())
    assert resp.status_code == 200 and resp.json()["outputs"][0]["data"] == [1, 2, 3]
    assert _index(http)["ex_b"]["state"] == "READY"
    expect_still_serving(http, "ex_a")


def test_load_unknown_model(explicit):
    """Triton answers 500 ("failed to poll from model repository")."""
    client, http = explicit
    expect_error(http.post("/v2/repository/models/no_such_model/load"), 500, "no_such_model")
    with pytest.raises(InferenceServerException, match="no_such_model"):
        client.load_model("no_such_model")
    expect_still_serving(http, "ex_a")


def test_load_failing_model(explicit):
    client, http = explicit
    expect_error(http.post("/v2/repository/models/nobackend/load"), 400, "nobackend")
    assert not client.is_model_ready("nobackend")
    entry = _index(http)["nobackend"]
    assert entry["state"] == "UNAVAILABLE"
    assert "no_such_backend" in entry["reason"]
    expect_error(http.infer("nobackend", int32_body()), 404, "nobackend")
    expect_still_serving(http, "ex_a")


def test_unload_unknown_model_is_accepted(explicit):
    """Triton answers 200 to unloading a model it does not know."""
    _, http = explicit
    resp = http.post("/v2/repository/models/no_such_model/unload")
    assert resp.status_code == 200, resp.text
    expect_still_serving(http, "ex_a")


def test_ready_filter_after_changes(explicit):
    _, http = explicit
    ready = http.post("/v2/repository/index", {"ready": True}).json()
    assert "ex_a" in {m["name"] for m in ready}
    assert all(m["state"] == "READY" for m in ready)
    assert "ex_never" not in {m["name"] for m in ready}
