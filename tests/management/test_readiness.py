"""Server readiness while models load: with --strict-readiness=false
`/v2/health/ready` stays 200 while a model loads (Kubernetes keeps the pod),
with strict readiness (the default) it is 400 until the model is ready; a
reload keeps a strict server ready, since the old version serves."""

import threading

import pytest
import tritonclient.http as httpclient

from helpers import Http, wait_for
from python_models import PyModel, config, write_repo
from servers import Server

# Takes a while to initialize.
SLOW_START_PY = '''\
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        time.sleep(2)

    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy())]) for r in requests]
'''


def _slow_model(name):
    return PyModel(name, SLOW_START_PY, config([("IN", "INT32", [1])], [("OUT", "INT32", [1])]))


def _ready_codes_while(http, action):
    """The status codes of /v2/health/ready, polled while `action` runs."""
    done = threading.Event()
    errors = []

    def run():
        try:
            action()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        done.set()

    threading.Thread(target=run).start()
    codes = []
    while not done.is_set():
        codes.append(http.get("/v2/health/ready").status_code)
    assert not errors, errors
    return codes


@pytest.mark.parametrize("strict", [True, False])
def test_ready_while_a_model_loads(tmp_path, strict):
    repo = write_repo(tmp_path / "repo", [_slow_model("slow")])
    flags = ["--model-control-mode=explicit", f"--strict-readiness={str(strict).lower()}"]
    with Server(repo, flags) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        codes = _ready_codes_while(http, lambda: client.load_model("slow"))
        assert codes, "polled during the load"
        if strict:
            assert 400 in codes, codes
        else:
            assert set(codes) == {200}, codes
        wait_for(lambda: http.get("/v2/health/ready").status_code == 200, what="ready")


@pytest.mark.oxiserve_only
def test_strict_server_stays_ready_during_a_reload(tmp_path):
    repo = write_repo(tmp_path / "repo", [_slow_model("slow")])
    flags = ["--model-control-mode=explicit", "--load-model=slow"]
    with Server(repo, flags) as server, Http(server.url) as http:
        client = httpclient.InferenceServerClient(server.url)
        codes = _ready_codes_while(http, lambda: client.load_model("slow"))
        assert set(codes) == {200}, codes
