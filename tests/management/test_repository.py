"""The model repository extension on the main server (model control "none")."""

import pytest
from tritonclient.utils import InferenceServerException

from catalog import main_models
from helpers import expect_error, expect_still_serving


def test_index_lists_every_version(client):
    index = client.get_model_repository_index()
    expected = []
    for spec in main_models():
        versions = spec.versions if spec.name == "versioned" else spec.versions[-1:]
        expected += [(spec.name, str(v)) for v in versions]
    assert sorted((m["name"], m["version"]) for m in index) == sorted(expected)
    assert {m["state"] for m in index} == {"READY"}


def test_index_ready_filter(http):
    everything = http.post("/v2/repository/index").json()
    ready = http.post("/v2/repository/index", {"ready": True}).json()
    key = lambda m: (m["name"], m["version"])  # noqa: E731
    assert sorted(ready, key=key) == sorted(everything, key=key)
    assert all(set(m) == {"name", "version", "state"} for m in ready)


@pytest.mark.parametrize("action", ["load", "unload"])
def test_load_unload_refused_without_explicit_mode(client, http, action):
    """Triton answers 503 in the default model control mode."""
    resp = http.post(f"/v2/repository/models/id_int32/{action}")
    expect_error(resp, 503, "not allowed")
    with pytest.raises(InferenceServerException):
        getattr(client, f"{action}_model")("id_int32")
    assert client.is_model_ready("id_int32")
    expect_still_serving(http)
