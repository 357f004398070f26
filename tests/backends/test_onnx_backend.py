"""The onnxruntime backend serving ONNX models: every result equals Python
onnxruntime's on the same inputs (HTTP and gRPC), over the datatypes, a
dynamic and a fixed batch dimension, string tensors, requested outputs,
several instances, the dynamic batcher, and request errors."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from helpers import Http, expect_error, wait_for
from onnx_models import (DTYPES, add_model, add_sub_model, assert_same, binary_model,
                         gather_model, identity_model, mlp_model, sample)
from servers import TARGET, Server

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="the real Triton here has no onnxruntime backend")

MODULES = {"http": httpclient, "grpc": grpcclient}
PROTOCOLS = list(MODULES)
DYN_REQUESTS = 16

ADD = add_model("add")
MODELS = {  # name -> (model, config.pbtxt)
    "add": (ADD, ADD.config(8, count=2)),
    "add_platform": (add_model("add_platform"),
                     add_model("add_platform").config(8, backend=False, platform=True)),
    "add_sub": (add_sub_model(), add_sub_model().config(8)),
    "mlp": (mlp_model(), mlp_model().config(8)),
    "embed": (gather_model(), gather_model().config(8)),
    "strings": (identity_model("strings", "BYTES", ["N", 2]),
                identity_model("strings", "BYTES", ["N", 2]).config(4)),
    "fixed": (add_model("fixed", (2, 3)), add_model("fixed", (2, 3)).config(0)),
    "dyn": (add_model("dyn"), add_model("dyn").config(
        8, "dynamic_batching { max_queue_delay_microseconds: 20000 }", count=1)),
}
for _dt in DTYPES:
    _m = binary_model(f"t_{_dt.lower()}", _dt)
    MODELS[_m.name] = (_m, _m.config(8))
NAMED = add_model("add_named_file")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("onnx_repo")
    for model, config in MODELS.values():
        model.write(repo, config)
    NAMED.write(repo, NAMED.config(8, 'default_model_filename: "net.onnx"'),
                filename="net.onnx")
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


@pytest.fixture(scope="module")
def http(server):
    with Http(server.url) as h:
        yield h


def infer(clients, protocol, model, feeds, outputs=None, binary=True):
    module = MODULES[protocol]
    inputs = []
    for name, array in feeds.items():
        inp = module.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        if protocol == "http":
            inp.set_data_from_numpy(array, binary_data=binary)
        else:
            inp.set_data_from_numpy(array)
        inputs.append(inp)
    wanted = None
    if outputs:
        wanted = [module.InferRequestedOutput(n) for n in outputs]
    return clients[protocol].infer(model, inputs, outputs=wanted)


def check(model, result, feeds, outputs=None):
    """Every (or every requested) output equals onnxruntime's."""
    expected = model.reference(feeds, outputs)
    types = {name: dt for name, dt, _ in model.outputs}
    for name, want in expected.items():
        assert_same(result.as_numpy(name), want, types[name])


def test_every_model_ready(server, clients):
    index = {m["name"]: m for m in clients["http"].get_model_repository_index()}
    not_ready = {n: index.get(n) for n in [*MODELS, NAMED.name]
                 if not clients["http"].is_model_ready(n)}
    assert not not_ready, not_ready
    assert clients["http"].is_server_ready()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_metadata(clients, protocol):
    meta = clients["http"].get_model_metadata("add")
    if protocol == "grpc":
        meta = clients["grpc"].get_model_metadata("add", as_json=True)
        for t in meta["inputs"] + meta["outputs"]:
            t["shape"] = [int(d) for d in t["shape"]]
    assert [(t["name"], t["datatype"], t["shape"]) for t in meta["inputs"]] == [
        ("A", "FP32", [-1, 4]), ("B", "FP32", [-1, 4])]
    assert [(t["name"], t["datatype"], t["shape"]) for t in meta["outputs"]] == [
        ("C", "FP32", [-1, 4])]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rows", [1, 3, 8])
def test_add_batch_sizes(clients, protocol, rows):
    feeds = {"A": sample("FP32", [rows, 4], 1), "B": sample("FP32", [rows, 4], 2)}
    result = infer(clients, protocol, "add", feeds)
    check(ADD, result, feeds)
    np.testing.assert_allclose(result.as_numpy("C"), feeds["A"] + feeds["B"], rtol=1e-6)


def test_add_json_data(clients):
    """Inputs and outputs as JSON numbers rather than binary data."""
    feeds = {"A": sample("FP32", [2, 4], 3), "B": sample("FP32", [2, 4], 4)}
    result = infer(clients, "http", "add", feeds, binary=False)
    check(ADD, result, feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_platform_onnxruntime_onnx(clients, protocol):
    """`platform: "onnxruntime_onnx"` with no backend line picks this backend."""
    feeds = {"A": sample("FP32", [2, 4], 5), "B": sample("FP32", [2, 4], 6)}
    check(ADD, infer(clients, protocol, "add_platform", feeds), feeds)
    config = clients["http"].get_model_config("add_platform")
    assert (config["platform"], config["backend"]) == ("onnxruntime_onnx", "onnxruntime")


def test_default_model_filename(clients):
    feeds = {"A": sample("FP32", [1, 4], 7), "B": sample("FP32", [1, 4], 8)}
    check(NAMED, infer(clients, "http", "add_named_file", feeds), feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mlp(clients, protocol):
    model = MODELS["mlp"][0]
    feeds = {"X": sample("FP32", [5, 16], 9)}
    result = infer(clients, protocol, "mlp", feeds)
    assert result.as_numpy("Y").shape == (5, 8)
    check(model, result, feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gather_embedding(clients, protocol):
    model = MODELS["embed"][0]
    indices = np.array([[0, 9, 3], [3, 3, 1]], dtype=np.int64)
    result = infer(clients, protocol, "embed", {"INDICES": indices})
    assert result.as_numpy("EMBEDDING").shape == (2, 3, 4)
    check(model, result, {"INDICES": indices})
    # Rows of the same index are the same embedding.
    out = result.as_numpy("EMBEDDING")
    np.testing.assert_array_equal(out[0, 2], out[1, 0])


@pytest.mark.parametrize("protocol, binary", [("http", True), ("http", False), ("grpc", True)])
def test_string_identity(clients, protocol, binary):
    model = MODELS["strings"][0]
    data = sample("BYTES", [3, 2], 10)
    result = infer(clients, protocol, "strings", {"IN": data}, binary=binary)
    assert result.as_numpy("OUT").tolist() == data.tolist()
    check(model, result, {"IN": data})


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("datatype", list(DTYPES))
def test_datatypes(clients, protocol, datatype):
    model = MODELS[f"t_{datatype.lower()}"][0]
    feeds = {name: sample(dt, [2, 4], seed) for seed, (name, dt, _) in enumerate(model.inputs)}
    result = infer(clients, protocol, model.name, feeds)
    check(model, result, feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fixed_shape_model(clients, protocol):
    """max_batch_size 0 and dims [2, 3]: the request's shape is the model's."""
    model = MODELS["fixed"][0]
    config = clients["http"].get_model_config("fixed")
    assert config["max_batch_size"] == 0
    assert [i["dims"] for i in config["input"]] == [[2, 3], [2, 3]]
    feeds = {"A": sample("FP32", [2, 3], 11), "B": sample("FP32", [2, 3], 12)}
    check(model, infer(clients, protocol, "fixed", feeds), feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("wanted", [["DIFF"], ["SUM"], ["DIFF", "SUM"]])
def test_requested_outputs(clients, protocol, wanted):
    model = MODELS["add_sub"][0]
    feeds = {"A": sample("FP32", [2, 4], 13), "B": sample("FP32", [2, 4], 14)}
    result = infer(clients, protocol, "add_sub", feeds, outputs=wanted)
    check(model, result, feeds, wanted)
    names = {o["name"] for o in result.get_response(as_json=True)["outputs"]} \
        if protocol == "grpc" else {o["name"] for o in result.get_response()["outputs"]}
    assert names == set(wanted)


def test_instance_group_count(clients):
    """Two instances (two sessions) serve concurrent requests correctly."""
    config = clients["http"].get_model_config("add")
    assert [(g["count"], g["kind"]) for g in config["instance_group"]] == [(2, "KIND_CPU")]

    def one(k):
        feeds = {"A": sample("FP32", [1 + k % 4, 4], 100 + k),
                 "B": sample("FP32", [1 + k % 4, 4], 200 + k)}
        check(ADD, infer(clients, "grpc", "add", feeds), feeds)
        return k

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(one, range(16))) == list(range(16))


def test_dynamic_batching(server):
    """16 requests of 1 to 3 rows at once (HTTP and gRPC threads): each gets
    its own rows back, and the batcher ran fewer executions than requests."""
    model = MODELS["dyn"][0]
    barrier = threading.Barrier(DYN_REQUESTS)
    rows = [1 + k % 3 for k in range(DYN_REQUESTS)]

    def one(k):
        protocol = PROTOCOLS[k % 2]
        module = MODULES[protocol]
        c = module.InferenceServerClient(server.url if protocol == "http" else server.grpc_url)
        try:
            feeds = {"A": sample("FP32", [rows[k], 4], 300 + k),
                     "B": sample("FP32", [rows[k], 4], 400 + k)}
            barrier.wait(timeout=60)
            result = infer({protocol: c}, protocol, "dyn", feeds)
            check(model, result, feeds)
            return k
        finally:
            c.close()

    with ThreadPoolExecutor(DYN_REQUESTS) as pool:
        assert sorted(pool.map(one, range(DYN_REQUESTS))) == list(range(DYN_REQUESTS))

    client = httpclient.InferenceServerClient(server.url)
    try:
        def counted():
            (entry,) = client.get_inference_statistics("dyn")["model_stats"]
            return entry if entry["inference_stats"]["success"]["count"] >= DYN_REQUESTS else None

        entry = wait_for(counted, what=f"{DYN_REQUESTS} successes counted")
        assert entry["inference_stats"]["success"]["count"] == DYN_REQUESTS, entry
        assert entry["inference_stats"]["fail"]["count"] == 0, entry
        assert entry["inference_count"] == sum(rows), entry
        assert 1 <= entry["execution_count"] < DYN_REQUESTS, entry
        assert all(b["batch_size"] <= 8 for b in entry["batch_stats"]), entry["batch_stats"]
    finally:
        client.close()


BAD_REQUESTS = {
    "shape": ("add", {"A": np.zeros((1, 5), np.float32), "B": np.zeros((1, 5), np.float32)}),
    "dtype": ("add", {"A": np.zeros((1, 4), np.int32), "B": np.zeros((1, 4), np.float32)}),
    "fixed_shape": ("fixed", {"A": np.zeros((2, 4), np.float32),
                              "B": np.zeros((2, 4), np.float32)}),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_request_http(clients, http, case):
    """HTTP 400 naming the input; a good request afterwards succeeds."""
    model, feeds = BAD_REQUESTS[case]
    body = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": np_to_triton_dtype(a.dtype),
                        "data": a.flatten().tolist()} for n, a in feeds.items()]}
    expect_error(http.infer(model, body), 400, "'A'", model)
    good = {"A": sample("FP32", [1, 4], 15), "B": sample("FP32", [1, 4], 16)}
    check(ADD, infer(clients, "http", "add", good), good)


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_request_grpc(clients, case):
    model, feeds = BAD_REQUESTS[case]
    with pytest.raises(InferenceServerException) as error:
        infer(clients, "grpc", model, feeds)
    assert error.value.status() == "StatusCode.INVALID_ARGUMENT", error.value
    assert "'A'" in error.value.message(), error.value.message()
    good = {"A": sample("FP32", [2, 3], 17), "B": sample("FP32", [2, 3], 18)}
    check(MODELS["fixed"][0], infer(clients, "grpc", "fixed", good), good)
