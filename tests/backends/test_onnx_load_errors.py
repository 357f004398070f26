"""ONNX models that fail to load, each in its own folder: the server starts
anyway, the other models serve, and the failed one is UNAVAILABLE with
Triton's reason in the repository index (HTTP, gRPC and raw HTTP). Last, a
server that cannot find the ONNX Runtime library still serves its other
models and says how to install it."""

import os
import shutil
from dataclasses import replace

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import Http, expect_still_serving, repository_index
from models import identity, write_model
from onnx_models import add_model, assert_same, sample, write_folder
from servers import TARGET, Server, oxiserve_bin

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="the real Triton here has no onnxruntime backend")

GOOD = add_model("good")


def _lying(name, inputs=None, outputs=None, shape=("N", 4)):
    """The A + B model under `name` with a config declaring other IO."""
    model = add_model(name, shape)
    return replace(model, inputs=inputs or model.inputs, outputs=outputs or model.outputs)


def _bad_models():
    """name -> (model bytes or None, config.pbtxt, expected reason substring)."""
    add = add_model("x")
    fp32 = lambda n, shape=("N", 4): (n, "FP32", list(shape))  # noqa: E731
    return {
        "corrupt": (np.random.default_rng(0).bytes(256),
                    replace(add, name="corrupt").config(8), "model.onnx"),
        "missing": (None, replace(add, name="missing").config(8), "model.onnx"),
        "in_dtype": (add.data(),
                     _lying("in_dtype", inputs=[("A", "INT32", ["N", 4]), fp32("B")]).config(8),
                     "configuration expects datatype TYPE_INT32 for input 'A', "
                     "model provides TYPE_FP32"),
        "in_name": (add.data(), _lying("in_name", inputs=[fp32("WRONG"), fp32("B")]).config(8),
                    "unexpected inference input 'WRONG', allowed inputs are: A, B"),
        "in_count": (add.data(), _lying("in_count", inputs=[fp32("A")]).config(8),
                     "configuration expects 1 inputs, model provides 2"),
        "rank": (add.data(),
                 _lying("rank", inputs=[fp32("A", ["N", 4, 1]), fp32("B")]).config(4),
                 "tensor 'A': the model expects 2 dimensions (shape [-1,4]) but the model "
                 "configuration specifies 3 dimensions"),
        "fixed_batch": (add_model("x", (2, 3)).data(),
                        _lying("fixed_batch", shape=(2, 3)).config(4),
                        "for the model to support batching the shape should have at least "
                        "1 dimension and the first dimension must be -1"),
        "out_dtype": (add.data(),
                      _lying("out_dtype", outputs=[("C", "INT64", ["N", 4])]).config(8),
                      "configuration expects datatype TYPE_INT64 for output 'C', "
                      "model provides TYPE_FP32"),
        "exec_mode": (add.data(), replace(add, name="exec_mode").config(
            8, 'parameters { key: "execution_mode" value: { string_value: "5" } }'),
            "execution_mode are 0 or 1 but got 5"),
        "openvino": (add.data(), replace(add, name="openvino").config(
            8, 'optimization { execution_accelerators { '
               'cpu_execution_accelerator : [ { name : "openvino" } ] } }'),
            "unknown Execution Accelerator 'openvino' is requested"),
    }


BAD = _bad_models()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("onnx_bad_repo")
    GOOD.write(repo, GOOD.config(8))
    for name, (data, config, _) in BAD.items():
        write_folder(repo, name, data, config)
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


def _index(clients, how, server):
    if how in ("http", "grpc"):
        return repository_index(clients, how)
    with Http(server.url) as http:
        resp = http.post("/v2/repository/index", {})
        assert resp.status_code == 200, resp.text
        return {m["name"]: m for m in resp.json()}


def _infer_good(client):
    feeds = {"A": sample("FP32", [2, 4], 1), "B": sample("FP32", [2, 4], 2)}
    inputs = []
    for name, array in feeds.items():
        inp = httpclient.InferInput(name, [2, 4], "FP32")
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    result = client.infer("good", inputs)
    assert_same(result.as_numpy("C"), GOOD.reference(feeds)["C"], "FP32")


def test_server_up_and_good_model_serves(clients):
    client = clients["http"]
    assert client.is_server_live()
    assert not client.is_server_ready()  # strict readiness: some models failed
    assert client.is_model_ready("good")
    _infer_good(client)


@pytest.mark.parametrize("how", ["http", "grpc", "raw"])
@pytest.mark.parametrize("name", list(BAD))
def test_unavailable_with_reason(server, clients, name, how):
    expected = BAD[name][2]
    entry = _index(clients, how, server).get(name)
    assert entry is not None, f"{name} missing from the repository index"
    assert entry["state"] == "UNAVAILABLE", entry
    assert expected in entry.get("reason", ""), entry
    assert not clients[how if how != "raw" else "http"].is_model_ready(name)


def test_good_model_still_serves_after_index(clients):
    """Listing the failures changed nothing for the good model."""
    _infer_good(clients["http"])
    assert _index(clients, "http", None)["good"]["state"] == "READY"


def test_missing_onnxruntime_library(tmp_path):
    """A copy of the binary outside the repository, without ORT_DYLIB_PATH,
    finds no ONNX Runtime: the identity model serves, the ONNX model is
    UNAVAILABLE with a reason naming the library and the pip package."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    binary = bindir / "oxiserve"
    shutil.copy(oxiserve_bin(), binary)
    binary.chmod(0o755)
    repo = tmp_path / "repo"
    GOOD.write(repo, GOOD.config(8))
    write_model(repo, identity("id", "INT32"), TARGET)
    env = {k: v for k, v in os.environ.items() if k not in ("ORT_DYLIB_PATH", "VIRTUAL_ENV")}
    with Server(repo, ["--exit-on-error=false"], binary=binary, env=env, cwd=tmp_path) as srv:
        client = httpclient.InferenceServerClient(srv.url)
        try:
            with Http(srv.url) as http:
                expect_still_serving(http, "id")
            entry = {m["name"]: m for m in client.get_model_repository_index()}["good"]
            assert entry["state"] == "UNAVAILABLE", entry
            assert "ONNX Runtime" in entry["reason"], entry
            assert "onnxruntime==1.31.1" in entry["reason"], entry
            assert not client.is_model_ready("good")
        finally:
            client.close()
