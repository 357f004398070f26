"""`--model-control-mode=poll`: models added, changed (configuration,
versions, version policy) and removed while the server runs are loaded,
reloaded and unloaded; a broken change (or a file still being written)
leaves the model serving; the load API is refused."""

import time

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import wait_for
from management_models import LOGGING_MODEL_PY, infer, logging_model
from python_models import write_repo
from servers import Server


@pytest.fixture
def polled(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = write_repo(tmp_path / "repo", [logging_model("a", logs / "a")])
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with Server(repo, flags) as server:
        client = httpclient.InferenceServerClient(server.url)
        yield server, client, repo, logs
        client.close()


def _config(client, name):
    try:
        return client.get_model_config(name)
    except InferenceServerException:
        return None


def test_added_changed_and_removed_models(polled):
    _, client, repo, logs = polled
    assert infer(client, "a") == [1, 2, 3, 4]

    write_repo(repo, [logging_model("b", logs / "b")])
    wait_for(lambda: client.is_model_ready("b"), what="the added model")
    assert infer(client, "b", (4, 3, 2, 1)) == [4, 3, 2, 1]

    config = repo / "a" / "config.pbtxt"
    config.write_text(config.read_text().replace("max_batch_size: 8", "max_batch_size: 4"))
    wait_for(lambda: (_config(client, "a") or {}).get("max_batch_size") == 4,
             what="the changed configuration")
    assert infer(client, "a") == [1, 2, 3, 4]

    # A new version, then a policy that serves every version.
    write_repo(repo, [logging_model("a", logs / "a", max_batch_size=4, versions=(1, 2))])
    wait_for(lambda: client.get_model_metadata("a")["versions"] == ["2"],
             what="the new version")
    config.write_text(config.read_text() + "version_policy: { all { } }\n")
    wait_for(lambda: sorted(client.get_model_metadata("a")["versions"]) == ["1", "2"],
             what="the new version policy")
    assert infer(client, "a", version="1") == [1, 2, 3, 4]

    for path in sorted((repo / "b").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (repo / "b").rmdir()
    wait_for(lambda: not client.is_model_ready("b"), what="the removed model to unload")
    assert client.is_model_ready("a")


def test_broken_change_keeps_the_model_serving(polled):
    server, client, repo, _ = polled
    (repo / "a" / "config.pbtxt").write_text('name: "a"\nbackend: "python"\nmax_batch_size: oops\n')
    # A few polls (one a second) see the broken file; the model stays as it was.
    for _ in range(3):
        time.sleep(1)
        assert infer(client, "a") == [1, 2, 3, 4]
        assert client.is_model_ready("a")
    assert client.get_model_config("a")["max_batch_size"] == 8
    assert "oops" in server.output(), "the failed reload is logged"


def test_load_api_is_refused(polled):
    _, client, _, _ = polled
    with pytest.raises(InferenceServerException) as e:
        client.load_model("a")
    assert "explicit model load / unload is not allowed if polling is enabled" in str(e.value)
    with pytest.raises(InferenceServerException):
        client.unload_model("a")
    assert client.is_model_ready("a")


def test_a_half_written_version_is_picked_up_once_complete(polled):
    """A new version folder whose model.py is still being written (the first
    half: a syntax error) fails to load and the old version keeps serving;
    once the file is complete, a later poll serves the new version."""
    _, client, repo, _ = polled
    source = LOGGING_MODEL_PY
    (repo / "a" / "2").mkdir()
    (repo / "a" / "2" / "model.py").write_text(source[: len(source) // 2])
    for _ in range(3):
        time.sleep(1)
        assert infer(client, "a") == [1, 2, 3, 4]
        assert _served_version(client) == "1"
    (repo / "a" / "2" / "model.py").write_text(source)
    wait_for(lambda: _served_version(client) == "2", what="version 2 to serve")
    assert infer(client, "a") == [1, 2, 3, 4]


def _served_version(client):
    tensor = httpclient.InferInput("INPUT0", [1, 4], "INT32")
    tensor.set_data_from_numpy(np.array([[1, 2, 3, 4]], dtype=np.int32))
    return client.infer("a", [tensor]).get_response()["model_version"]
