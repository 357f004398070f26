"""`--model-namespacing=true` as Triton 2.51 has it (the checks of Triton's
L0_model_namespacing, in our own models): each repository is a namespace,
so models of one name in two repositories are served side by side. A name
held by one repository works as usual; a name held by two is ambiguous to a
request (Triton's error, HTTP 400 / gRPC INVALID_ARGUMENT); an ensemble's
steps find the model of their name in the ensemble's own repository first;
the index lists every copy; metrics carry a `namespace` label; poll mode
follows a copy that goes and comes back; an explicit load of a name loads
every copy of it.

The copies are `offset` models: OUTPUT0 = INPUT0 + their offset, so each
answer tells which copy gave it (repository a: +1, repository b: +2)."""

import shutil
import time

import numpy as np
import pytest
import requests
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from helpers import Http, wait_for
from models import model_source
from python_models import PyModel, config, write_repo
from servers import Server

OFFSET_PY = model_source("offset")
AMBIGUOUS = (
    "There are 2 identifiers of model '{}' in global map, model namespace must be "
    "provided to resolve ambiguity."
)


def offset_model(name, offset):
    parameter = f'parameters {{ key: "offset" value: {{ string_value: "{offset}" }} }}\n'
    return PyModel(
        name,
        OFFSET_PY,
        config([("INPUT0", "INT32", [2])], [("OUTPUT0", "INT32", [2])], extra=parameter),
    )


def write_ensemble(repo, name, step):
    """An ensemble `name` of one step on model `step` (INPUT0 -> OUTPUT0)."""
    folder = repo / name
    (folder / "1").mkdir(parents=True)
    (folder / "config.pbtxt").write_text(
        f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: 0\n'
        'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]\n'
        'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]\n'
        f'ensemble_scheduling {{ step [ {{ model_name: "{step}" model_version: -1 '
        'input_map { key: "INPUT0" value: "INPUT0" } '
        'output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }\n'
    )


@pytest.fixture
def duplicated(tmp_path):
    """Repository a: `composing` (+1) and `ens_a` on it; repository b:
    `composing` (+2) and `ens_b` on it."""
    a = write_repo(tmp_path / "a", [offset_model("composing", 1)])
    b = write_repo(tmp_path / "b", [offset_model("composing", 2)])
    write_ensemble(a, "ens_a", "composing")
    write_ensemble(b, "ens_b", "composing")
    return a, b


def serve(a, b, *flags):
    return Server(a, [f"--model-repository={b}", "--model-namespacing=true", *flags])


def run(client, model):
    """OUTPUT0 of `model` for INPUT0 = [1, 2]."""
    tensor = httpclient.InferInput("INPUT0", [2], "INT32")
    tensor.set_data_from_numpy(np.array([1, 2], dtype=np.int32))
    return client.infer(model, [tensor]).as_numpy("OUTPUT0").tolist()


def answer(client, model):
    """`run`, or None while the model cannot answer."""
    try:
        return run(client, model)
    except InferenceServerException:
        return None


def expect_ambiguous(http, name):
    resp = http.infer(name, {"inputs": [
        {"name": "INPUT0", "datatype": "INT32", "shape": [2], "data": [1, 2]}]})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"] == AMBIGUOUS.format(name)
    resp = http.get(f"/v2/models/{name}")
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"] == AMBIGUOUS.format(name)
    assert http.get(f"/v2/models/{name}/ready").status_code == 400


def index(http):
    return http.post("/v2/repository/index", {}).json()


def test_names_held_by_one_repository_work_as_usual(tmp_path):
    a = write_repo(tmp_path / "a", [offset_model("plus_one", 1)])
    b = write_repo(tmp_path / "b", [offset_model("plus_two", 2)])
    write_ensemble(a, "ens_a", "plus_one")
    write_ensemble(b, "ens_b", "plus_two")
    with serve(a, b) as server, Http(server.url) as http:
        assert http.get("/v2/health/ready").status_code == 200
        client = httpclient.InferenceServerClient(server.url)
        assert run(client, "plus_one") == [2, 3]
        assert run(client, "ens_a") == [2, 3]
        assert run(client, "plus_two") == [3, 4]
        assert run(client, "ens_b") == [3, 4]
        client.close()


def test_each_ensemble_runs_the_copy_in_its_own_repository(duplicated):
    a, b = duplicated
    with serve(a, b) as server, Http(server.url) as http:
        assert http.get("/v2/health/ready").status_code == 200
        client = httpclient.InferenceServerClient(server.url)
        assert run(client, "ens_a") == [2, 3]
        assert run(client, "ens_b") == [3, 4]
        client.close()

        expect_ambiguous(http, "composing")
        with grpcclient.InferenceServerClient(server.grpc_url) as grpc:
            tensor = grpcclient.InferInput("INPUT0", [2], "INT32")
            tensor.set_data_from_numpy(np.array([1, 2], dtype=np.int32))
            with pytest.raises(InferenceServerException) as e:
                grpc.infer("composing", [tensor])
            assert e.value.status() == "StatusCode.INVALID_ARGUMENT"
            assert e.value.message() == AMBIGUOUS.format("composing")
            assert not grpc.is_model_ready("composing")

        # Every copy in the index, repository by repository; the namespace
        # itself is not shown.
        assert index(http) == [
            {"name": "composing", "version": "1", "state": "READY"},
            {"name": "ens_a", "version": "1", "state": "READY"},
            {"name": "composing", "version": "1", "state": "READY"},
            {"name": "ens_b", "version": "1", "state": "READY"},
        ]
        # The step names the repository it was bound to.
        steps = http.get("/v2/models/ens_a/config").json()["ensemble_scheduling"]["step"]
        assert steps[0]["model_namespace"] == str(a)

        resp = http.get("/v2/models/nothing")
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"] == "Request for unknown model: 'nothing' is not found"


@pytest.mark.parametrize("mode", ["none", "explicit"])
def test_ensembles_of_one_name_are_ambiguous(tmp_path, mode):
    a = write_repo(tmp_path / "a", [offset_model("plus_one", 1)])
    b = write_repo(tmp_path / "b", [offset_model("plus_two", 2)])
    write_ensemble(a, "ensemble", "plus_one")
    write_ensemble(b, "ensemble", "plus_two")
    with serve(a, b, f"--model-control-mode={mode}") as server, Http(server.url) as http:
        assert http.get("/v2/health/ready").status_code == 200
        client = httpclient.InferenceServerClient(server.url)
        if mode == "explicit":
            # Both ensembles of the name, and their steps with them.
            client.load_model("ensemble")
        assert run(client, "plus_one") == [2, 3]
        assert run(client, "plus_two") == [3, 4]
        client.close()
        expect_ambiguous(http, "ensemble")


def test_metrics_carry_the_namespace(duplicated):
    a, b = duplicated
    with serve(a, b) as server:
        client = httpclient.InferenceServerClient(server.url)
        run(client, "ens_a")
        client.close()
        text = requests.get(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10).text
    # Labels in name order, as prometheus-cpp prints them.
    for repo, model, count in [(a, "composing", 1), (b, "composing", 0), (a, "ens_a", 1)]:
        line = f'nv_inference_request_success{{model="{model}",namespace="{repo}",version="1"}}'
        assert f"{line} {count}\n" in text, f"{line} {count} not in:\n{text}"


def test_poll_mode_follows_a_copy_that_goes_and_comes_back(duplicated, tmp_path):
    a, b = duplicated
    away = tmp_path / "away"
    with serve(a, b, "--model-control-mode=poll", "--repository-poll-secs=1") as server, \
            Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        assert run(client, "ens_a") == [2, 3]
        # Real Triton's first poll, just after it starts, loads every model
        # again; a folder moved away meanwhile fails that load (a race of
        # its own, not what this test is about): let it pass first.
        time.sleep(3)

        # a's copy goes: both ensembles, and the name, find b's.
        shutil.move(a / "composing", away)
        wait_for(lambda: answer(client, "ens_a") == [3, 4], what="ens_a on b's copy")
        assert run(client, "ens_b") == [3, 4]
        wait_for(lambda: answer(client, "composing") == [3, 4], what="the one copy by name")
        names = [row["name"] for row in index(http)]
        assert names.count("composing") == 1, names

        # It comes back: ens_a runs it again, and the name is ambiguous again.
        shutil.move(away, a / "composing")
        wait_for(lambda: answer(client, "ens_a") == [2, 3], what="ens_a on a's copy again")
        assert run(client, "ens_b") == [3, 4]
        wait_for(lambda: answer(client, "composing") is None, what="the name to be ambiguous")
        expect_ambiguous(http, "composing")
        client.close()


def test_explicit_load_and_unload_act_on_every_copy(duplicated):
    a, b = duplicated
    with serve(a, b, "--model-control-mode=explicit") as server, Http(server.url) as http:
        resp = http.get("/v2/models/composing")
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"] == "Request for unknown model: 'composing' is not found"

        # Loading an ensemble loads every copy of its step's name.
        client = httpclient.InferenceServerClient(server.url)
        client.load_model("ens_a")
        assert run(client, "ens_a") == [2, 3]
        assert index(http) == [
            {"name": "composing", "version": "1", "state": "READY"},
            {"name": "ens_a", "version": "1", "state": "READY"},
            {"name": "composing", "version": "1", "state": "READY"},
            {"name": "ens_b"},
        ]
        expect_ambiguous(http, "composing")

        # Unloading the name unloads every copy, and the ensemble with them.
        client.unload_model("composing")
        resp = http.get("/v2/models/composing")
        assert resp.status_code == 404, resp.text
        assert resp.json()["error"] == (
            "Identifier of model 'composing' is not found in global map")
        wait_for(lambda: not client.is_model_ready("ens_a"), what="ens_a to go with its step")

        # Loading the name again brings the ensemble back.
        client.load_model("composing")
        assert run(client, "ens_a") == [2, 3]
        expect_ambiguous(http, "composing")
        client.close()


def test_explicit_load_binds_again_when_a_copy_returns(duplicated, tmp_path):
    a, b = duplicated
    away = tmp_path / "away"
    with serve(a, b, "--model-control-mode=explicit") as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        shutil.move(a / "composing", away)
        client.load_model("ens_a")
        client.load_model("ens_b")
        assert run(client, "ens_a") == [3, 4]
        assert run(client, "ens_b") == [3, 4]
        assert run(client, "composing") == [3, 4]

        # Back in a: loading ens_a loads a's copy too and binds ens_a to it.
        shutil.move(away, a / "composing")
        client.load_model("ens_a")
        assert run(client, "ens_a") == [2, 3]
        assert run(client, "ens_b") == [3, 4]
        expect_ambiguous(http, "composing")
        client.close()
