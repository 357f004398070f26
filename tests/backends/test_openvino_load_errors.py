"""OpenVINO models that fail to load, each in its own folder: the server
starts anyway, the good model serves, and each failed one is UNAVAILABLE
with a reason naming the model and the tensor or parameter (HTTP and gRPC
repository index). Then: a server that cannot find the OpenVINO library
still serves its other models and says how to install it, and a server
with no OpenVINO model never maps libopenvino (/proc/<pid>/maps) until one
loads."""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient

from helpers import Http, expect_still_serving, repository_index
from models import identity, write_model
from openvino_models import add_sub_model, sample
from servers import TARGET, Server, oxiserve_bin

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="Triton 2.51's reference build here has no openvino backend")

GOOD = add_sub_model("good")
FP32 = ["N", 4]


def _lying(name, inputs=None, outputs=None):
    """The add_sub model with a config declaring other inputs or outputs."""
    model = add_sub_model(name)
    return replace(model, inputs=inputs or model.inputs, outputs=outputs or model.outputs)


def _param(key, value):
    return f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}'


# name -> (config.pbtxt, expected reason substrings); each folder holds the
# add_sub IR except "missing" (none) and "corrupt" (garbage XML).
BAD = {
    "missing": (_lying("missing").config(8), ["model.xml", "missing"]),
    "corrupt": (_lying("corrupt").config(8), ["unable to load model 'corrupt'",
                                              "OpenVINO could not read"]),
    "in_name": (_lying("in_name", inputs=[("WRONG", "FP32", FP32), ("B", "FP32", FP32)])
                .config(8), ["unexpected inference input 'WRONG', allowed inputs are: A, B"]),
    "in_dtype": (_lying("in_dtype", inputs=[("A", "INT32", FP32), ("B", "FP32", FP32)])
                 .config(8), ["unable to load model 'in_dtype', configuration expects datatype "
                              "TYPE_INT32 for input 'A', model provides TYPE_FP32"]),
    "in_string": (_lying("in_string", inputs=[("A", "BYTES", FP32), ("B", "FP32", FP32)])
                  .config(8), ["model 'in_string'", "unsupported datatype TYPE_STRING for "
                               "input 'A'"]),
    "in_count": (_lying("in_count", inputs=[("A", "FP32", FP32)]).config(8),
                 ["unable to load model 'in_count', configuration expects 1 inputs, "
                  "model provides 2"]),
    "in_shape": (_lying("in_shape", inputs=[("A", "FP32", ["N", 5]), ("B", "FP32", FP32)])
                 .config(8), ["model 'in_shape', tensor 'A': the model expects 2 dimensions "
                              "(shape [-1,4]) but the model configuration specifies 2 dimensions"]),
    "out_dtype": (_lying("out_dtype", outputs=[("SUM", "INT64", FP32)]).config(8),
                  ["unable to load model 'out_dtype', configuration expects datatype "
                   "TYPE_INT64 for output 'SUM', model provides TYPE_FP32"]),
    "out_name": (_lying("out_name", outputs=[("PRODUCT", "FP32", FP32)]).config(8),
                 ["unexpected inference output 'PRODUCT', allowed outputs are: SUM, DIFF"]),
    "hint": (_lying("hint").config(8, _param("PERFORMANCE_HINT", "fast")),
             ["unable to load model 'hint': expected the parameter 'PERFORMANCE_HINT' to be "
              "LATENCY/THROUGHPUT/CUMULATIVE_THROUGHPUT, got fast"]),
    "streams": (_lying("streams").config(8, _param("NUM_STREAMS", "many")),
                ["unable to load model 'streams': expected the parameter 'NUM_STREAMS' to be "
                 "either AUTO/NUMA/<int_value>, got many"]),
    "threads": (_lying("threads").config(8, _param("INFERENCE_NUM_THREADS", "-2")),
                ["expected the parameter 'INFERENCE_NUM_THREADS' to be a non-negative number"]),
    "device": (_lying("device").config(8, _param("TARGET_DEVICE", "NOSUCHDEVICE")),
               ["unable to load model 'device'", "NOSUCHDEVICE"]),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("openvino_bad_repo")
    GOOD.write(repo, GOOD.config(8))
    for name, (config, _) in BAD.items():
        if name == "missing":
            (repo / name / "1").mkdir(parents=True)
            (repo / name / "config.pbtxt").write_text(config)
        elif name == "corrupt":
            (repo / name / "1").mkdir(parents=True)
            (repo / name / "config.pbtxt").write_text(config)
            (repo / name / "1" / "model.xml").write_text("<net><layers>not a model")
        else:
            add_sub_model(name).write(repo, config)
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


def _infer_good(client):
    feeds = {"A": sample("FP32", [2, 4], 1), "B": sample("FP32", [2, 4], 2)}
    inputs = []
    for name, array in feeds.items():
        inp = httpclient.InferInput(name, [2, 4], "FP32")
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    result = client.infer("good", inputs)
    np.testing.assert_array_equal(result.as_numpy("SUM"), GOOD.reference(feeds)["SUM"])


def test_good_model_serves(clients):
    assert clients["http"].is_server_live()
    assert clients["http"].is_model_ready("good")
    _infer_good(clients["http"])


@pytest.mark.parametrize("how", ["http", "grpc"])
@pytest.mark.parametrize("name", list(BAD))
def test_unavailable_with_reason(clients, name, how):
    entry = repository_index(clients, how).get(name)
    assert entry is not None, f"{name} missing from the repository index"
    assert entry["state"] == "UNAVAILABLE", entry
    for needle in BAD[name][1]:
        assert needle in entry.get("reason", ""), (needle, entry)
    assert not clients["http"].is_model_ready(name)
    _infer_good(clients["http"])


def _copied_binary(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    binary = bindir / "oxiserve"
    shutil.copy(oxiserve_bin(), binary)
    binary.chmod(0o755)
    return binary


def test_missing_openvino_library(tmp_path):
    """A copy of the binary outside the checkout finds no OpenVINO: the
    identity model serves, the OpenVINO model is UNAVAILABLE with a reason
    naming the wheel to install."""
    binary = _copied_binary(tmp_path)
    repo = tmp_path / "repo"
    GOOD.write(repo, GOOD.config(8))
    write_model(repo, identity("id", "INT32"), TARGET)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    with Server(repo, ["--exit-on-error=false"], binary=binary, env=env, cwd=tmp_path) as srv:
        client = httpclient.InferenceServerClient(srv.url)
        try:
            with Http(srv.url) as http:
                expect_still_serving(http, "id")
            entry = {m["name"]: m for m in client.get_model_repository_index()}["good"]
            assert entry["state"] == "UNAVAILABLE", entry
            assert "OpenVINO library not found" in entry["reason"], entry
            assert "openvino==2026.4.1" in entry["reason"], entry
        finally:
            client.close()


def _maps_openvino(pid):
    maps = Path(f"/proc/{pid}/maps").read_text()
    return sorted({line.split()[-1] for line in maps.splitlines() if "libopenvino" in line})


def test_openvino_is_mapped_only_when_one_of_its_models_loads(tmp_path):
    """A server with only an identity model has no libopenvino in its
    address space; loading an OpenVINO model (explicit mode) maps it."""
    repo = tmp_path / "repo"
    write_model(repo, identity("id", "INT32"), TARGET)
    GOOD.write(repo, GOOD.config(8))
    flags = ["--model-control-mode=explicit", "--load-model=id"]
    with Server(repo, flags) as srv:
        client = httpclient.InferenceServerClient(srv.url)
        try:
            assert client.is_model_ready("id")
            assert _maps_openvino(srv.proc.pid) == []
            client.load_model("good")
            _infer_good(client)
            assert any("libopenvino_c" in path for path in _maps_openvino(srv.proc.pid))
        finally:
            client.close()
