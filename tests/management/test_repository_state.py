"""What the model table holds when a model folder cannot be used, as Triton
2.51 keeps it: a folder that gives no configuration stays out of the table
(the server stays ready), a model in two repositories is taken out of
service with Triton's reason, and a model with a version that fails to load
is unavailable as a whole."""

import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, wait_for
from management_models import infer, logging_model
from python_models import INIT_FAILS_PY, write_repo
from servers import Server, run_to_exit

NOT_UNIQUE = "model appears in two or more repositories"


def _index(http):
    return http.post("/v2/repository/index", {}).json()


def _rows(http, name):
    return [row for row in _index(http) if row["name"] == name]


def _unusable_folders(repo):
    """`noconf`: a version folder with no model file and no config.pbtxt;
    `badcfg`: a config.pbtxt that does not parse."""
    (repo / "noconf" / "1").mkdir(parents=True)
    (repo / "badcfg" / "1").mkdir(parents=True)
    (repo / "badcfg" / "config.pbtxt").write_text('name: "badcfg"\ninput [ { name: ')


def test_unusable_folders_stay_out_of_the_table(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("good", tmp_path / "good.log")])
    _unusable_folders(repo)
    with Server(repo, ["--exit-on-error=false"]) as server, Http(server.url) as http:
        assert http.get("/v2/health/live").status_code == 200
        assert http.get("/v2/health/ready").status_code == 200
        assert _rows(http, "noconf") == [{"name": "noconf"}]
        assert _rows(http, "badcfg") == [{"name": "badcfg"}]
        assert _rows(http, "good") == [{"name": "good", "version": "1", "state": "READY"}]
        assert http.get("/v2/models/noconf/config").status_code == 404
        assert http.get("/v2/models/noconf/ready").status_code == 400
        client = httpclient.InferenceServerClient(server.url)
        assert infer(client, "good") == [1, 2, 3, 4]
        client.close()
    log = server.output()
    assert "Poll failed for model directory 'noconf'" in log
    assert "Poll failed for model directory 'badcfg'" in log


def test_unusable_folders_still_fail_the_start_by_default(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("good", tmp_path / "good.log")])
    _unusable_folders(repo)
    status, output = run_to_exit(repo)
    assert status not in (0, None), output
    assert "failed to load all models" in output


def test_explicit_load_of_an_unusable_folder_fails(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("good", tmp_path / "good.log")])
    _unusable_folders(repo)
    flags = ["--model-control-mode=explicit", "--load-model=good"]
    with Server(repo, flags) as server, Http(server.url) as http:
        for name in ("noconf", "badcfg"):
            resp = http.post(f"/v2/repository/models/{name}/load", {})
            assert resp.status_code == 500, resp.text
            assert f"failed to load '{name}', failed to poll from model repository" in (
                resp.json()["error"])
            assert _rows(http, name) == [{"name": name}]
        assert http.get("/v2/health/ready").status_code == 200


def test_a_poll_that_finds_an_unusable_folder_keeps_the_server_ready(tmp_path):
    repo = write_repo(tmp_path / "repo", [logging_model("good", tmp_path / "good.log")])
    flags = ["--model-control-mode=poll", "--repository-poll-secs=1"]
    with Server(repo, flags) as server, Http(server.url) as http:
        _unusable_folders(repo)
        wait_for(lambda: "Poll failed for model directory 'badcfg'" in server.output(),
                 what="the poll of the new folders")
        assert http.get("/v2/health/ready").status_code == 200
        assert _rows(http, "noconf") == [{"name": "noconf"}]


@pytest.fixture
def two_repositories(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_repo(first, [logging_model("twice", tmp_path / "first.log")])
    second.mkdir()
    flags = [f"--model-repository={second}", "--model-control-mode=poll",
             "--repository-poll-secs=1"]
    with Server(first, flags) as server, Http(server.url) as http:
        yield server, http, tmp_path, second


def test_a_model_in_two_repositories_is_taken_out_of_service(two_repositories):
    server, http, tmp_path, second = two_repositories
    client = httpclient.InferenceServerClient(server.url)
    assert infer(client, "twice") == [1, 2, 3, 4]

    write_repo(second, [logging_model("twice", tmp_path / "second.log")])
    wait_for(lambda: _rows(http, "twice") == [
        {"name": "twice", "state": "UNAVAILABLE", "reason": NOT_UNIQUE}],
        what="the duplicate to take the model out")
    # (Triton finishes the unload a moment after the index changes.)
    wait_for(lambda: not client.is_model_ready("twice"), what="the model not ready")
    with pytest.raises(InferenceServerException, match="has no available versions"):
        infer(client, "twice")
    wait_for(lambda: http.get("/v2/health/ready").status_code == 200,
             what="the server ready once the unload finishes")
    assert "failed to poll model 'twice': not unique across all model repositories" in (
        server.output())

    # With one copy left the model serves again.
    for path in sorted((second / "twice").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (second / "twice").rmdir()
    wait_for(lambda: client.is_model_ready("twice"), what="the model to come back")
    assert infer(client, "twice") == [1, 2, 3, 4]
    client.close()


def test_explicit_load_of_a_model_in_two_repositories_fails(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_repo(first, [logging_model("twice", tmp_path / "first.log")])
    write_repo(second, [logging_model("twice", tmp_path / "second.log")])
    flags = [f"--model-repository={second}", "--model-control-mode=explicit"]
    with Server(first, flags) as server, Http(server.url) as http:
        resp = http.post("/v2/repository/models/twice/load", {})
        assert resp.status_code == 500, resp.text
        assert "failed to load 'twice'" in resp.json()["error"]
        assert not httpclient.InferenceServerClient(server.url).is_model_ready("twice")


def _half_broken(repo, tmp_path):
    """`half`: version 1 loads, version 2 raises in initialize; both served."""
    model = logging_model("half", tmp_path / "half.log", versions=(1, 2))
    model.config += "version_policy: { all { } }\n"
    folder = model.write(repo)
    (folder / "2" / "model.py").write_text(INIT_FAILS_PY)


def test_a_failing_version_makes_the_whole_model_unavailable(tmp_path):
    repo = tmp_path / "repo"
    write_repo(repo, [logging_model("good", tmp_path / "good.log")])
    _half_broken(repo, tmp_path)
    with Server(repo, ["--exit-on-error=false"]) as server, Http(server.url) as http:
        unloaded = {"name": "half", "version": "1", "state": "UNAVAILABLE", "reason": "unloaded"}
        rows = wait_for(lambda: (r := _rows(http, "half"))[0] == unloaded and r,
                        what="version 1 unloaded (Triton shows UNLOADING a moment)")
        assert rows[1]["version"] == "2" and rows[1]["state"] == "UNAVAILABLE"
        assert "initialize refused" in rows[1]["reason"]
        resp = http.post("/v2/models/half/versions/1/infer", {"inputs": [
            {"name": "INPUT0", "datatype": "INT32", "shape": [1, 4], "data": [1, 2, 3, 4]}]})
        assert resp.status_code == 503, resp.text
        assert "version 1 is not at ready state" in resp.json()["error"]
        assert http.get("/v2/health/ready").status_code == 400
    assert "failed to load 'half'" in server.output()


def test_explicit_load_names_the_failing_version(tmp_path):
    repo = tmp_path / "repo"
    _half_broken(repo, tmp_path)
    with Server(repo, ["--model-control-mode=explicit"]) as server, Http(server.url) as http:
        resp = http.post("/v2/repository/models/half/load", {})
        assert resp.status_code == 400, resp.text
        error = resp.json()["error"]
        assert "load failed for model 'half'" in error
        assert "version 2 is at UNAVAILABLE state" in error
        assert "version 1" not in error
        wait_for(lambda: [r.get("state") for r in _rows(http, "half")] == ["UNAVAILABLE"] * 2,
                 what="both versions unavailable")

