"""The openvino backend serving OpenVINO IR models (and an ONNX file, which
OpenVINO reads too), built by the test with the `openvino` package: every
result equals OpenVINO's own Python runtime on the same saved model (HTTP
and gRPC), over the datatypes, a dynamic batch, a model whose batch
dimension is fixed in the file, the dynamic batcher, requested outputs,
several instances, and Triton's parameters (NUM_STREAMS, PERFORMANCE_HINT,
INFERENCE_NUM_THREADS, SKIP_OV_DYNAMIC_BATCHSIZE with and without
ENABLE_BATCH_PADDING, RESHAPE_IO_LAYERS)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from onnx_models import add_model
from openvino_models import DTYPES, add_sub_model, mlp_model, sample, typed_model
from servers import TARGET, Server

pytestmark = pytest.mark.skipif(
    TARGET == "triton", reason="Triton 2.51's reference build here has no openvino backend")

MODULES = {"http": httpclient, "grpc": grpcclient}
PROTOCOLS = list(MODULES)


def _params(**values):
    return "\n".join(f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}'
                     for k, v in values.items())


ADD_SUB = add_sub_model()
MLP = mlp_model()
STATIC = add_sub_model("static_batch", (1, 4))  # batch dimension 1 in the file
FIXED = add_sub_model("fixed", (2, 3))
RESHAPED = add_sub_model("reshaped", (2, 3))
MODELS = {  # name -> (model, config.pbtxt)
    "add_sub": (ADD_SUB, ADD_SUB.config(8, _params(NUM_STREAMS="1", PERFORMANCE_HINT="LATENCY"))),
    "mlp": (MLP, MLP.config(8, _params(INFERENCE_NUM_THREADS="2"), count=2)),
    "dyn": (add_sub_model("dyn"), add_sub_model("dyn").config(
        8, "dynamic_batching { max_queue_delay_microseconds: 20000 }\n"
           + _params(PERFORMANCE_HINT="THROUGHPUT", NUM_STREAMS="AUTO"))),
    "static_batch": (STATIC, STATIC.config(8)),
    "padded": (add_sub_model("padded"), add_sub_model("padded").config(
        4, _params(SKIP_OV_DYNAMIC_BATCHSIZE="YES", ENABLE_BATCH_PADDING="YES"))),
    "unpadded": (add_sub_model("unpadded"), add_sub_model("unpadded").config(
        4, _params(SKIP_OV_DYNAMIC_BATCHSIZE="YES"))),
    "fixed": (FIXED, FIXED.config(0)),
    "reshaped": (RESHAPED, RESHAPED.config(0, _params(RESHAPE_IO_LAYERS="YES")).replace(
        "dims: [ 2, 3 ]", "dims: [ -1, 3 ]")),
}
for _dt in DTYPES:
    _m = typed_model(_dt)
    MODELS[_m.name] = (_m, _m.config(8))
ONNX = add_model("onnx_add")  # A + B = C, read by OpenVINO's ONNX frontend


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("openvino_repo")
    for model, config in MODELS.values():
        model.write(repo, config)
    ONNX.write(repo, ONNX.config(8).replace('backend: "onnxruntime"', 'backend: "openvino"')
               + 'default_model_filename: "model.onnx"\n')
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


def infer(clients, protocol, model, feeds, outputs=None):
    module = MODULES[protocol]
    inputs = []
    for name, array in feeds.items():
        inp = module.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    wanted = [module.InferRequestedOutput(n) for n in outputs] if outputs else None
    return clients[protocol].infer(model, inputs, outputs=wanted)


def check(model, result, feeds, outputs=None):
    """Every (or every requested) output equals OpenVINO's Python runtime's."""
    for name, want in model.reference(feeds, outputs).items():
        got = result.as_numpy(name)
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got, want)
        np.testing.assert_array_equal(got, want)


def test_every_model_ready(clients):
    index = {m["name"]: m for m in clients["http"].get_model_repository_index()}
    not_ready = {n: index.get(n) for n in [*MODELS, ONNX.name]
                 if not clients["http"].is_model_ready(n)}
    assert not not_ready, not_ready


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rows", [1, 3, 8])
def test_add_sub_batch_sizes(clients, protocol, rows):
    feeds = {"A": sample("FP32", [rows, 4], 1), "B": sample("FP32", [rows, 4], 2)}
    result = infer(clients, protocol, "add_sub", feeds)
    check(ADD_SUB, result, feeds)
    np.testing.assert_allclose(result.as_numpy("SUM"), feeds["A"] + feeds["B"], rtol=1e-6)


def test_input_tensors_kept_between_requests_hold_each_requests_values(clients):
    """An instance keeps its input tensors while the batch shape repeats: the
    same shape with new values, another shape, then the first shape again
    (and a padded batch smaller than the one before) each answer their own."""
    for seed, rows, model in [(30, 3, "add_sub"), (31, 3, "add_sub"), (32, 5, "add_sub"),
                              (33, 3, "add_sub"), (34, 4, "padded"), (35, 2, "padded"),
                              (36, 4, "padded")]:
        feeds = {"A": sample("FP32", [rows, 4], seed), "B": sample("FP32", [rows, 4], seed + 50)}
        result = infer(clients, "http", model, feeds)
        check(MODELS[model][0], result, feeds)
        np.testing.assert_allclose(result.as_numpy("SUM"), feeds["A"] + feeds["B"], rtol=1e-6)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("wanted", [["DIFF"], ["SUM"]])
def test_requested_outputs(clients, protocol, wanted):
    feeds = {"A": sample("FP32", [2, 4], 3), "B": sample("FP32", [2, 4], 4)}
    result = infer(clients, protocol, "add_sub", feeds, outputs=wanted)
    check(ADD_SUB, result, feeds, wanted)
    other = ({"SUM", "DIFF"} - set(wanted)).pop()
    assert result.as_numpy(other) is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mlp_two_instances(clients, protocol):
    feeds = {"X": sample("FP32", [5, 16], 5)}
    result = infer(clients, protocol, "mlp", feeds)
    assert result.as_numpy("Y").shape == (5, 8)
    check(MLP, result, feeds)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("datatype", list(DTYPES))
def test_datatypes(clients, protocol, datatype):
    model = MODELS[f"t_{datatype.lower()}"][0]
    feeds = {"IN": sample(datatype, [2, 3], 6)}
    check(model, infer(clients, protocol, model.name, feeds), feeds)


def test_config_shows_the_parameters(clients):
    config = clients["http"].get_model_config("add_sub")
    assert config["backend"] == "openvino"
    assert config["parameters"]["NUM_STREAMS"]["string_value"] == "1"
    assert [(i["name"], i["dims"]) for i in config["input"]] == [("A", [4]), ("B", [4])]


@pytest.mark.parametrize("rows", [1, 5])
def test_static_batch_in_the_file_becomes_dynamic(clients, rows):
    """The IR says [1, 4]; with max_batch_size 8 the backend reshapes its
    batch dimension, so any batch up to 8 runs (OpenVINO's Python runtime
    runs the same rows one at a time)."""
    feeds = {"A": sample("FP32", [rows, 4], 7), "B": sample("FP32", [rows, 4], 8)}
    result = infer(clients, "http", "static_batch", feeds)
    for name in ("SUM", "DIFF"):
        want = np.concatenate([STATIC.reference({k: v[i:i + 1] for k, v in feeds.items()})[name]
                               for i in range(rows)])
        np.testing.assert_array_equal(result.as_numpy(name), want)


@pytest.mark.parametrize("rows", [1, 3, 4])
def test_fixed_batch_with_padding(clients, rows):
    """SKIP_OV_DYNAMIC_BATCHSIZE fixes the batch at max_batch_size (4);
    ENABLE_BATCH_PADDING pads smaller batches and answers only their rows."""
    model = MODELS["padded"][0]
    feeds = {"A": sample("FP32", [rows, 4], 9), "B": sample("FP32", [rows, 4], 10)}
    result = infer(clients, "grpc", "padded", feeds)
    check(model, result, feeds)


def test_fixed_batch_without_padding_refuses_smaller_batches(clients):
    model = MODELS["unpadded"][0]
    full = {"A": sample("FP32", [4, 4], 11), "B": sample("FP32", [4, 4], 12)}
    check(model, infer(clients, "http", "unpadded", full), full)
    small = {k: v[:3] for k, v in full.items()}
    with pytest.raises(InferenceServerException) as err:
        infer(clients, "http", "unpadded", small)
    message = str(err.value)
    assert "model 'unpadded': expected requests with batch size '4', got '3'" in message, message
    assert "ENABLE_BATCH_PADDING" in message, message
    check(model, infer(clients, "http", "unpadded", full), full)  # still serving


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fixed_shape_model(clients, protocol):
    config = clients["http"].get_model_config("fixed")
    assert config["max_batch_size"] == 0
    feeds = {"A": sample("FP32", [2, 3], 13), "B": sample("FP32", [2, 3], 14)}
    check(FIXED, infer(clients, protocol, "fixed", feeds), feeds)


@pytest.mark.parametrize("rows", [1, 2, 6])
def test_reshape_io_layers(clients, rows):
    """The IR says [2, 3]; RESHAPE_IO_LAYERS with dims [-1, 3] takes any rows."""
    feeds = {"A": sample("FP32", [rows, 3], 15), "B": sample("FP32", [rows, 3], 16)}
    result = infer(clients, "http", "reshaped", feeds)
    np.testing.assert_array_equal(result.as_numpy("SUM"), feeds["A"] + feeds["B"])
    np.testing.assert_array_equal(result.as_numpy("DIFF"), feeds["A"] - feeds["B"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_onnx_file(clients, protocol):
    feeds = {"A": sample("FP32", [3, 4], 17), "B": sample("FP32", [3, 4], 18)}
    result = infer(clients, protocol, "onnx_add", feeds)
    np.testing.assert_array_equal(result.as_numpy("C"), ONNX.reference(feeds)["C"])


def test_dynamic_batcher_batches_and_answers_each(server, clients):
    """16 requests of 1 to 3 rows at once (HTTP and gRPC threads): each gets
    its own rows back, and the batcher ran fewer executions than requests."""
    model = MODELS["dyn"][0]
    before = clients["http"].get_inference_statistics("dyn")["model_stats"][0]
    barrier = threading.Barrier(16)
    feeds = [{"A": sample("FP32", [1 + k % 3, 4], 100 + k),
              "B": sample("FP32", [1 + k % 3, 4], 200 + k)} for k in range(16)]

    def one(k):
        protocol = PROTOCOLS[k % 2]
        client = MODULES[protocol].InferenceServerClient(
            server.url if protocol == "http" else server.grpc_url)
        try:
            barrier.wait(timeout=60)
            return infer({protocol: client}, protocol, "dyn", feeds[k])
        finally:
            client.close()

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, range(16)))
    for feed, result in zip(feeds, results):
        check(model, result, feed)
    after = clients["http"].get_inference_statistics("dyn")["model_stats"][0]
    assert after["inference_count"] - before["inference_count"] == sum(
        f["A"].shape[0] for f in feeds)
    assert after["execution_count"] - before["execution_count"] < 16, (before, after)
