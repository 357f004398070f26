"""The pytorch backend serving TorchScript models traced or scripted here
with Python torch: every result equals Python torch's on the same inputs
(HTTP and gRPC), for an MLP, a two-input int64 model named by index and by
forward()'s arguments, a tuple, a list and a dict result, a scripted
data-dependent branch, the datatypes, strings, a dict argument, batching and
the dynamic batcher. Errors: a TorchScript failure comes back as one clean
line, a corrupt model.pt and a configuration forward() does not fit fail to
load (saying what forward() takes) while the rest keeps serving, and
`oxiserve validate` reports the same."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import pytorch_models as pm
from helpers import wait_for
from servers import TARGET, Server, oxiserve_validate
from tensor_samples import sample

pytestmark = [
    pytest.mark.skipif(TARGET == "triton", reason="the real Triton here has no pytorch backend"),
    # torch 2.13 deprecates TorchScript, which is what Triton serves.
    pytest.mark.filterwarnings(r"ignore:`torch\.jit:DeprecationWarning"),
]

MODULES = {"http": httpclient, "grpc": grpcclient}
PROTOCOLS = list(MODULES)
DATATYPES = ["BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP16", "BF16", "FP32",
             "FP64"]
DYN_REQUESTS = 16
BERT_SIGNATURE = "forward(Tensor input_ids, Tensor attention_mask) -> Tensor"


def _models():
    models = [
        pm.mlp(),
        pm.mlp("mlp_fp64"),
        pm.tiny_bert(),
        pm.tiny_bert("bert_named", inputs=("attention_mask", "input_ids")),
        pm.two_outputs(),
        pm.branch(),
        pm.upper(),
        pm.dict_in(),
        pm.dict_out(),
        pm.list_out(),
        pm.mlp("dyn", max_batch_size=8, extra="dynamic_batching { max_queue_delay_microseconds: 20000 }",
               parameters={"INTRA_OP_THREAD_COUNT": "1"}),
    ]
    models[1].inputs = [("INPUT__0", "FP64", [4])]
    return {m.name: m for m in models + [pm.plus_one(d) for d in DATATYPES]}


MODELS = _models()
# name -> (what to write, the reason its load fails)
BROKEN = {
    "corrupt": ("not a zip archive", "is not a TorchScript model libtorch can load"),
    "one_input": (pm.tiny_bert("one_input", inputs=("input__0",)),
                  "the configuration has 1 input(s), forward() takes 2; the model's "
                  + BERT_SIGNATURE),
}


def _write_broken(repo):
    for name, (what, _) in BROKEN.items():
        if isinstance(what, str):
            folder = pm.mlp(name).write(repo)
            (folder / "1" / "model.pt").write_text(what)
        else:
            what.write(repo)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("pytorch_repo")
    for model in MODELS.values():
        model.write(repo)
    _write_broken(repo)
    return repo


@pytest.fixture(scope="module")
def server(repo):
    with Server(repo, ["--exit-on-error=false"]) as server:
        yield server


def infer(client, protocol, model, feeds, datatypes, outputs=None):
    module = MODULES[protocol]
    inputs = []
    for name, array in feeds.items():
        inp = module.InferInput(name, list(array.shape), datatypes[name])
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    requested = [module.InferRequestedOutput(o) for o in outputs] if outputs else None
    result = client.infer(model, inputs, outputs=requested)
    return result


def check(model, feeds, protocol, clients, outputs=None):
    datatypes = {n: d for n, d, _ in model.inputs}
    result = infer(clients[protocol], protocol, model.name, feeds, datatypes, outputs)
    expected = model.reference(feeds)
    for name in outputs or expected:
        got = result.as_numpy(name)
        assert got is not None, f"{model.name}: no output {name}"
        want = expected[name]
        assert got.shape == want.shape, (model.name, name, got.shape, want.shape)
        if want.dtype == np.object_:
            assert list(got.reshape(-1)) == list(want.reshape(-1))
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{model.name}.{name}")
    if outputs:
        assert all(result.as_numpy(o) is None for o in expected if o not in outputs)


def test_models_ready_and_broken_ones_unavailable(clients):
    client = clients["http"]
    index = {m["name"]: m for m in client.get_model_repository_index()}
    for name in MODELS:
        assert index[name]["state"] == "READY", index[name]
    for name, (_, reason) in BROKEN.items():
        assert index[name]["state"] == "UNAVAILABLE", index[name]
        assert reason in index[name]["reason"], index[name]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rows", [1, 3, 8])
def test_mlp(clients, protocol, rows):
    check(MODELS["mlp"], {"INPUT__0": sample("FP32", [rows, 4], rows)}, protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", ["bert", "bert_named"])
def test_two_int64_inputs(clients, protocol, name):
    """input__0/input__1 by index, or attention_mask/input_ids (listed in the
    other order) by forward()'s argument names."""
    model = MODELS[name]
    ids = sample("INT64", [2, 7], 5) * 11
    mask = np.ones((2, 7), np.int64)
    mask[1, 4:] = 0
    by_arg = {"input_ids": ids, "attention_mask": mask, "input__0": ids, "input__1": mask}
    feeds = {n: by_arg[n] for n, _, _ in model.inputs}
    check(model, feeds, protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("outputs", [None, ["OUTPUT__1"]])
def test_tuple_outputs(clients, protocol, outputs):
    check(MODELS["two_outputs"], {"INPUT__0": sample("FP32", [3, 3], 7)}, protocol, clients,
          outputs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("sign", [1, -1])
def test_scripted_branch(clients, protocol, sign):
    x = np.abs(sample("FP32", [5], 9)) * sign + 0.5 * sign
    check(MODELS["branch"], {"INPUT__0": x}, protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("datatype", DATATYPES)
def test_datatypes(clients, protocol, datatype):
    check(MODELS[f"plus_one_{datatype.lower()}"], {"INPUT__0": sample(datatype, [2, 3], 3)},
          protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_strings(clients, protocol):
    texts = np.array([b"hello", b"triton", "\u00e9t\u00e9".encode()], dtype=np.object_)
    check(MODELS["upper"], {"INPUT__0": texts}, protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_dict_input(clients, protocol):
    feeds = {"a": sample("FP32", [2, 2], 1), "b": sample("FP32", [2, 2], 2)}
    check(MODELS["dict_in"], feeds, protocol, clients)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", ["dict_out", "list_out"])
def test_dict_and_list_results(clients, protocol, name):
    check(MODELS[name], {"INPUT__0": sample("FP32", [2, 2], 4)}, protocol, clients)


def test_dynamic_batching(server):
    """16 requests of 1 to 3 rows at once: each gets its own rows back, and
    the batcher ran fewer executions than requests."""
    model = MODELS["dyn"]
    barrier = threading.Barrier(DYN_REQUESTS)
    rows = [1 + k % 3 for k in range(DYN_REQUESTS)]

    def one(k):
        protocol = PROTOCOLS[k % 2]
        c = MODULES[protocol].InferenceServerClient(
            server.url if protocol == "http" else server.grpc_url)
        try:
            feeds = {"INPUT__0": sample("FP32", [rows[k], 4], 100 + k)}
            barrier.wait(timeout=60)
            check(model, feeds, protocol, {protocol: c})
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
        assert entry["inference_count"] == sum(rows), entry
        assert 1 <= entry["execution_count"] < DYN_REQUESTS, entry
    finally:
        client.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("case", ["shape", "dtype"])
def test_torchscript_error_is_one_clean_line(clients, protocol, case):
    """A shape forward() cannot broadcast, or an FP64 input into FP32
    weights: the error is libtorch's message without the TorchScript
    traceback or C++ frames, and the server keeps serving."""
    if case == "shape":
        model, needle = "bert", "must match the size of tensor b (6)"
        feeds = {"input__0": np.zeros((1, 5), np.int64), "input__1": np.ones((1, 6), np.int64)}
        datatypes = {"input__0": "INT64", "input__1": "INT64"}
    else:
        model, needle = "mlp_fp64", "dtype"
        feeds = {"INPUT__0": np.zeros((1, 4), np.float64)}
        datatypes = {"INPUT__0": "FP64"}
    with pytest.raises(InferenceServerException) as error:
        infer(clients[protocol], protocol, model, feeds, datatypes)
    message = error.value.message()
    assert "PyTorch execute failure" in message and needle in message, message
    assert "\n" not in message and "Traceback" not in message and "frame #" not in message
    test_mlp(clients, protocol, 1)


def test_validate_reports_what_forward_takes(repo):
    """`oxiserve validate` names the broken models, and for the one whose
    configuration does not fit, what forward() takes."""
    status, out, shown = oxiserve_validate(repo)
    assert status == 1, shown
    assert BERT_SIGNATURE in out, out
    assert "corrupt" in out, out
    assert "2 problem(s)" in out, out
