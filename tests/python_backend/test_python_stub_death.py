"""A Python model's process that dies mid-request: the request fails with Triton's
"Stub process 'NAME' is not healthy." (NAME: the model instance) over HTTP and gRPC,
and oxiserve's log line says it too, beside its own detail (pid, exit reason,
restart). Triton 2.51 puts that sentence in the error only, never in its log, and
keeps failing later requests with it (oxiserve restarts the process:
test_python_crash.py)."""

import re

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from helpers import Http, expect_error, wait_for
from python_models import crash_model, serve

NOT_HEALTHY = "Stub process '%s_0_0' is not healthy."


def _body(mode):
    return {"inputs": [{"name": "MODE", "shape": [1], "datatype": "BYTES", "data": [mode]}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    models = [crash_model("died_http"), crash_model("died_grpc")]
    with serve(tmp_path_factory.mktemp("py_stub_death"), models) as s:
        yield s


def test_http_error_names_the_stub(server):
    with Http(server.url) as http:
        expect_error(http.infer("died_http", _body("exit3")), 500, NOT_HEALTHY % "died_http")


def test_grpc_error_names_the_stub(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"kill9"], dtype=np.object_))
    with pytest.raises(Exception) as info:
        client.infer("died_grpc", [tensor])
    client.close()
    assert info.value.status() == "StatusCode.INTERNAL"
    assert NOT_HEALTHY % "died_grpc" in info.value.message()


@pytest.mark.oxiserve_only  # Triton 2.51 logs nothing when its stub dies
def test_log_line_says_it_beside_the_detail(server):
    with Http(server.url) as http:
        expect_error(http.infer("died_http", _body("segv")), 500, NOT_HEALTHY % "died_http")
    pattern = re.compile(
        r"^E.*" + re.escape(NOT_HEALTHY % "died_http") + r" Python model instance "
        r"'died_http_0_0' \(pid \d+\) exited unexpectedly \(.*SIGSEGV.*\)", re.M)
    wait_for(lambda: pattern.search(server.output()), what="the log line")
