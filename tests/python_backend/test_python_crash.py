"""A Python model process that dies mid-request (os._exit(3), a segfault,
SIGKILL): only that request fails, with the reason; the server stays live,
other models answer, the instance restarts for the next request; a crash loop
makes it UNAVAILABLE; open decoupled streams fail; nothing is left behind.
oxiserve only: Triton 2.51 never restarts a crashed stub: the crashing request
and every later one get 500 "Stub process 'crash_0_0' is not healthy." while the
model (and the server) still report ready."""

import json
import os
import queue
import signal
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import Http, expect_error, wait_for
from python_models import add_sub, crash_model, serve

pytestmark = pytest.mark.oxiserve_only

REASONS = {
    "exit3": "exit code 3",
    "segv": "SIGSEGV",
    "kill9": "SIGKILL",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # One model per test: each crash counts toward the 5-in-60-s restart limit.
    models = [crash_model(), crash_model("crash_grpc"),
              crash_model("crash_dec", decoupled=True), add_sub()]
    with serve(tmp_path_factory.mktemp("py_crash"), models) as s:
        yield s


def _body(mode):
    return {"inputs": [{"name": "MODE", "shape": [1], "datatype": "BYTES", "data": [mode]}]}


def _ok(http, model="crash"):
    resp = http.infer(model, _body("ok"))
    assert resp.status_code == 200, resp.text
    return json.loads(resp.json()["outputs"][0]["data"][0])


def _add_sub_ok(http):
    body = {"inputs": [
        {"name": "INPUT0", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]},
        {"name": "INPUT1", "shape": [1, 4], "datatype": "FP32", "data": [1, 1, 1, 1]},
    ]}
    resp = http.infer("add_sub", body)
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize("mode", list(REASONS))
def test_crash_fails_only_that_request_and_restarts(server, mode):
    with Http(server.url) as http:
        before = _ok(http)["pid"]
        text = expect_error(http.infer("crash", _body(mode)), 500,
                            "Python model instance 'crash_0_0'", f"(pid {before})",
                            "exited unexpectedly", REASONS[mode])
        assert "restarted" in text
        assert http.get("/v2/health/live").status_code == 200
        _add_sub_ok(http)
        after = _ok(http)["pid"]
        assert after != before


def test_crash_over_grpc(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"exit3"], dtype=np.object_))
    with pytest.raises(Exception) as info:
        client.infer("crash_grpc", [tensor])
    assert info.value.status() == "StatusCode.INTERNAL"
    assert "Python model instance 'crash_grpc_0_0'" in info.value.message()
    assert "exited unexpectedly" in info.value.message()
    client.close()
    with Http(server.url) as http:
        _ok(http, "crash_grpc")


def test_crash_in_decoupled_stream_fails_the_open_stream(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    got = queue.Queue()
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    tensor = grpcclient.InferInput("MODE", [1], "BYTES")
    tensor.set_data_from_numpy(np.array([b"exit_later"], dtype=np.object_))
    client.async_stream_infer("crash_dec", [tensor], request_id="x")
    first, error = got.get(timeout=30)
    assert error is None and first.get_response().id == "x"
    result, error = got.get(timeout=30)
    assert result is None and "exited unexpectedly" in error.message()
    client.stop_stream()
    # The instance came back: a fresh request is answered with FINAL.
    tensor.set_data_from_numpy(np.array([b"ok"], dtype=np.object_))
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("crash_dec", [tensor], request_id="y")
    result, error = got.get(timeout=30)
    client.stop_stream()
    client.close()
    assert error is None and result.get_response().id == "y"


def test_crash_loop_makes_the_instance_unavailable(tmp_path):
    flags = ["--model-control-mode=explicit", "--load-model=*"]
    with serve(tmp_path / "repo", [crash_model()], flags) as server, Http(server.url) as http:
        for _ in range(5):
            expect_error(http.infer("crash", _body("exit3")), 500, "exited unexpectedly")
        expect_error(http.infer("crash", _body("ok")), 503,
                     "crashed 5 times in 60 s; reload the model")
        client = httpclient.InferenceServerClient(server.url)
        client.load_model("crash")
        client.close()
        _ok(http)


def _shm_names():
    return {p.name for p in Path("/dev/shm").iterdir()
            if any(k in p.name.lower() for k in ("oxi", "python", "triton"))}


def _gone(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def test_nothing_left_after_server_sigkill(tmp_path):
    shm_before = _shm_names()
    with serve(tmp_path / "repo", [crash_model(), add_sub()]) as server:
        with Http(server.url) as http:
            report = _ok(http)
            _add_sub_ok(http)
        pids = [p for p in (report["pid"], report["ppid"]) if p != server.proc.pid]
        os.kill(server.proc.pid, signal.SIGKILL)  # the server only, not its group
        server.proc.wait()
        wait_for(lambda: all(_gone(p) for p in pids), timeout=15,
                 what=f"Python processes {pids} to exit")
    assert _shm_names() <= shm_before
