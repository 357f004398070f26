"""The tensorflow backend serving SavedModels and a GraphDef saved here with
Python TensorFlow (the tensorflow-cpu wheel): every result equals Python
TensorFlow's on the same inputs (HTTP and gRPC), for an MLP with two
outputs, a non-default signature named by TF_SIGNATURE_DEF, every datatype,
strings (BYTES, short and long), a GraphDef, and the dynamic batcher.
Auto-complete fills a SavedModel's configuration from its signature. Bad
models (no model.savedmodel, a wrong tensor name, datatype or shape, a
missing signature) fail to load with errors naming the model and tensor
while the rest keeps serving, and `oxiserve validate` reports them. A
server without TensorFlow models never maps libtensorflow."""

import importlib
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from helpers import IDENTITY_BACKEND, wait_for
from servers import TARGET, Server, oxiserve_validate
from tensor_samples import sample

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="the real Triton 2.51 here has no tensorflow backend")

MODULES = {"http": httpclient, "grpc": grpcclient}
PROTOCOLS = list(MODULES)
DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
             "FP16", "BF16", "FP32", "FP64"]
DYN_REQUESTS = 16
LIBRARY = "libtensorflow_cc.so.2"
# name -> (how its config or folder is broken, the words its load error has)
BROKEN = {
    "no_savedmodel": ("an empty version folder",
                      ["no_savedmodel/1/model.savedmodel does not exist"]),
    "wrong_name": ('input "nope"', ["unexpected inference input 'nope', allowed inputs are: x"]),
    "wrong_dtype": ("x: TYPE_INT32", ["unable to load model 'wrong_dtype', configuration expects "
                                      "datatype TYPE_INT32 for input 'x', model provides TYPE_FP32"]),
    "wrong_shape": ("x: dims [5]", ["model 'wrong_shape', tensor 'x': the model expects 2 dimensions "
                                    "(shape [-1,4]) but the model configuration specifies 2 dimensions"]),
    "no_signature": ("TF_SIGNATURE_DEF: nope", ["unable to load model 'no_signature', expected "
                                                "'nope' signature; the SavedModel has: double, "
                                                "serving_default"]),
    "graphdef_wrong_output": ('output "OUTPUT9"', ["unexpected inference output 'OUTPUT9', allowed "
                                                   "outputs are:", "OUTPUT0"]),
}


@pytest.fixture(scope="module")
def tfm():
    """The model builders; importing them imports TensorFlow."""
    return importlib.import_module("tf_models")


@pytest.fixture(scope="module")
def models(tfm, tmp_path_factory):
    """Every model, saved once for the module."""
    work = tmp_path_factory.mktemp("tf_saved")
    mlp = tfm.mlp(work)
    double = tfm.TfModel("mlp_double", mlp.inputs, [("doubled", "FP32", [4])], max_batch_size=8,
                         signature="double", parameters={"TF_SIGNATURE_DEF": "double"},
                         source=mlp.source)
    dyn = tfm.TfModel("mlp_dyn", mlp.inputs, mlp.outputs, max_batch_size=8,
                      extra="dynamic_batching { max_queue_delay_microseconds: 20000 }",
                      scalars={"label"}, source=mlp.source)
    all_models = [mlp, double, dyn, tfm.strings(work), tfm.graph_def(work)]
    all_models += [tfm.reverse(work, d) for d in DATATYPES]
    return {m.name: m for m in all_models}


def _write_broken(tfm, repo, models):
    mlp, graph = models["mlp"], models["add_sub_graphdef"]

    def variant(name, **changes):
        fields = {"inputs": mlp.inputs, "outputs": mlp.outputs, "max_batch_size": 8,
                  "scalars": {"label"}, "source": mlp.source, **changes}
        return tfm.TfModel(name, **fields)

    folder = variant("no_savedmodel").write(repo)
    shutil.rmtree(folder / "1" / "model.savedmodel")
    variant("wrong_name", inputs=[("nope", "FP32", [4])]).write(repo)
    variant("wrong_dtype", inputs=[("x", "INT32", [4])]).write(repo)
    variant("wrong_shape", inputs=[("x", "FP32", [5])]).write(repo)
    variant("no_signature", parameters={"TF_SIGNATURE_DEF": "nope"}).write(repo)
    tfm.TfModel("graphdef_wrong_output", graph.inputs, [("OUTPUT9", "FP32", [4])],
                max_batch_size=8, graph_def=True, source=graph.source).write(repo)


@pytest.fixture(scope="module")
def repo(tfm, models, tmp_path_factory):
    repo = tmp_path_factory.mktemp("tf_repo")
    for model in models.values():
        model.write(repo)
    # Auto-complete: a SavedModel folder without config.pbtxt.
    mlp = models["mlp"]
    auto = tfm.TfModel("mlp_auto", mlp.inputs, mlp.outputs, source=mlp.source).write(repo)
    (auto / "config.pbtxt").unlink()
    _write_broken(tfm, repo, models)
    return repo


@pytest.fixture(scope="module")
def server(repo):
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


def check(model, feeds, protocol, client, outputs=None, model_name=None):
    module = MODULES[protocol]
    inputs = []
    for name, datatype, _ in model.inputs:
        array = feeds[name]
        inp = module.InferInput(name, list(array.shape), datatype)
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    requested = [module.InferRequestedOutput(o) for o in outputs] if outputs else None
    result = client.infer(model_name or model.name, inputs, outputs=requested)
    expected = model.reference(feeds)
    for name in outputs or expected:
        got, want = result.as_numpy(name), expected[name]
        assert got is not None, f"{model.name}: no output {name}"
        if name in model.scalars:
            want = want.reshape(-1, 1)
        assert got.shape == want.shape, (model.name, name, got.shape, want.shape)
        if want.dtype == np.object_:
            assert list(got.reshape(-1)) == list(want.reshape(-1))
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{model.name}.{name}")
    if outputs:
        assert all(result.as_numpy(o) is None for o in expected if o not in outputs)
    return result


def test_models_ready_and_broken_ones_unavailable(clients, models):
    index = {m["name"]: m for m in clients["http"].get_model_repository_index()}
    for name in [*models, "mlp_auto"]:
        assert index[name]["state"] == "READY", index[name]
    for name, (_, words) in BROKEN.items():
        assert index[name]["state"] == "UNAVAILABLE", index[name]
        for word in words:
            assert word in index[name]["reason"], index[name]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rows", [1, 3, 8])
def test_mlp(clients, models, protocol, rows):
    check(models["mlp"], {"x": sample("FP32", [rows, 4], rows)}, protocol, clients[protocol])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_requested_outputs_only(clients, models, protocol):
    check(models["mlp"], {"x": sample("FP32", [2, 4], 9)}, protocol, clients[protocol],
          outputs=["scores"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_signature_named_by_the_config(clients, models, protocol):
    """The same SavedModel served with its `double` signature."""
    result = check(models["mlp_double"], {"x": sample("FP32", [2, 4], 4)}, protocol,
                   clients[protocol])
    assert result.as_numpy("scores") is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("datatype", DATATYPES)
def test_datatypes(clients, models, protocol, datatype):
    check(models[f"reverse_{datatype.lower()}"], {"x": sample(datatype, [2, 3], 3)}, protocol,
          clients[protocol])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_strings(clients, models, protocol):
    """Short strings (kept inside TensorFlow's string), long ones (on the
    heap), an empty one and bytes that are not UTF-8."""
    texts = np.array([b"hello", b"", "\u00e9t\u00e9".encode(), b"x" * 100, b"\xff\x00z"],
                     dtype=np.object_)
    check(models["strings"], {"text": texts}, protocol, clients[protocol])


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rows", [1, 5])
def test_graph_def(clients, models, protocol, rows):
    feeds = {"INPUT0": sample("FP32", [rows, 4], 1), "INPUT1": sample("FP32", [rows, 4], 2)}
    check(models["add_sub_graphdef"], feeds, protocol, clients[protocol])


def test_dynamic_batching(server, models):
    """16 requests of 1 to 3 rows at once: each gets its own rows back, and
    the batcher ran fewer executions than requests."""
    model = models["mlp_dyn"]
    barrier = threading.Barrier(DYN_REQUESTS)
    rows = [1 + k % 3 for k in range(DYN_REQUESTS)]

    def one(k):
        protocol = PROTOCOLS[k % 2]
        c = MODULES[protocol].InferenceServerClient(
            server.url if protocol == "http" else server.grpc_url)
        try:
            feeds = {"x": sample("FP32", [rows[k], 4], 100 + k)}
            barrier.wait(timeout=60)
            check(model, feeds, protocol, c)
            return k
        finally:
            c.close()

    with ThreadPoolExecutor(DYN_REQUESTS) as pool:
        assert sorted(pool.map(one, range(DYN_REQUESTS))) == list(range(DYN_REQUESTS))
    client = httpclient.InferenceServerClient(server.url)
    try:
        def counted():
            (entry,) = client.get_inference_statistics(model.name)["model_stats"]
            return entry if entry["inference_stats"]["success"]["count"] >= DYN_REQUESTS else None

        entry = wait_for(counted, what=f"{DYN_REQUESTS} successes counted")
        assert entry["inference_count"] == sum(rows), entry
        assert 1 <= entry["execution_count"] < DYN_REQUESTS, entry
    finally:
        client.close()


def test_auto_complete_from_the_signature(clients, models):
    """No config.pbtxt: the platform from model.savedmodel/, then inputs,
    outputs (`label`, only the batch dimension, as [1] with an empty
    reshape), max_batch_size 4 and the dynamic batcher from the signature."""
    config = clients["http"].get_model_config("mlp_auto")
    assert config["platform"] == "tensorflow_savedmodel", config
    assert config["backend"] == "tensorflow", config
    assert config["max_batch_size"] == 4, config
    assert "dynamic_batching" in config, config
    assert [(t["name"], t["data_type"], t["dims"]) for t in config["input"]] == [
        ("x", "TYPE_FP32", [4])]
    outputs = {t["name"]: t for t in config["output"]}
    assert (outputs["scores"]["data_type"], outputs["scores"]["dims"]) == ("TYPE_FP32", [3])
    assert (outputs["label"]["data_type"], outputs["label"]["dims"]) == ("TYPE_INT64", [1])
    assert outputs["label"]["reshape"] == {"shape": []}, outputs["label"]
    check(models["mlp"], {"x": sample("FP32", [2, 4], 6)}, "http", clients["http"],
          model_name="mlp_auto")


def test_validate_reports_the_broken_models(repo):
    status, out, shown = oxiserve_validate(repo)
    assert status == 1, shown
    for name, (_, words) in BROKEN.items():
        lines = [line for line in out.splitlines() if f"error: {name}" in line]
        assert lines, f"{name} not reported:\n{out}"
        assert words[0] in lines[0], lines[0]
    assert "ok: mlp (tensorflow, version 1)" in out, out
    assert "ok: add_sub_graphdef (tensorflow, version 1)" in out, out
    assert f"{len(BROKEN)} problem(s)" in out, out


def _maps(server):
    return Path(f"/proc/{server.proc.pid}/maps").read_text()


def test_library_mapped_only_when_a_tensorflow_model_loads(server, tmp_path):
    """The server with TensorFlow models maps libtensorflow; one with only an
    identity model does not."""
    assert LIBRARY in _maps(server)
    other = tmp_path / "repo"
    model = other / "plain"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(
        f'name: "plain"\nbackend: "{IDENTITY_BACKEND}"\nmax_batch_size: 0\n'
        'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
        'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]\n')
    with Server(other) as plain:
        assert "libtensorflow" not in _maps(plain)
