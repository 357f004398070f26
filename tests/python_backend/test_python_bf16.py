"""BF16 tensors in a Python model, after Triton's qa/python_models/identity_bf16:
`as_numpy()` raises TritonModelException ("Tensor dtype is BF16 and cannot be
converted to NumPy ..."), `to_dlpack()` and `Tensor.from_dlpack` carry the tensor
through (a capsule, or the tensor itself), and the outputs come back as BF16 with
the input's values. Where the model's Python has PyTorch (Triton's test uses it),
torch sees torch.bfloat16."""

import json

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, serve

VALUES = np.array([[1, 2.5, -3], [0.5, 8, 100]], dtype=np.float32)  # exact in BF16
NO_NUMPY = ("TritonModelException: Tensor dtype is BF16 and cannot be converted to NumPy. "
            "Use to_dlpack() and from_dlpack() instead.")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    model = PyModel("bf16", model_source("bf16"), config(
        [("INPUT0", "BF16", [-1, -1])],
        [("OUTPUT0", "BF16", [-1, -1]), ("OUTPUT1", "BF16", [-1, -1]),
         ("REPORT", "BYTES", [1])]))
    with serve(tmp_path_factory.mktemp("py_bf16"), [model]) as s:
        yield s


@pytest.fixture(scope="module")
def result(server):
    client = httpclient.InferenceServerClient(server.url)
    tensor = httpclient.InferInput("INPUT0", list(VALUES.shape), "BF16")
    tensor.set_data_from_numpy(VALUES)
    result = client.infer("bf16", [tensor])
    client.close()
    return result


def test_outputs_are_bf16_with_the_input_values(result):
    outputs = {o["name"]: o for o in result.get_response()["outputs"]}
    for name in ("OUTPUT0", "OUTPUT1"):
        assert outputs[name]["datatype"] == "BF16"
        assert outputs[name]["shape"] == [2, 3]
        np.testing.assert_array_equal(result.as_numpy(name), VALUES)


def test_as_numpy_raises_and_dlpack_works(result):
    report = json.loads(result.as_numpy("REPORT")[0])
    assert report["input shape"] == [2, 3]
    assert report["output shape"] == [2, 3]
    assert report["input as_numpy"] == NO_NUMPY
    assert report["output as_numpy"] == NO_NUMPY  # made by from_dlpack(to_dlpack())
    assert report["__dlpack__ as_numpy"] == NO_NUMPY  # made by from_dlpack(tensor)
    assert report["__dlpack_device__"] == [1, 0]  # kDLCPU
    if report["torch"] is not None:  # the model's Python has PyTorch
        assert report["torch"] == {"dtype": "torch.bfloat16", "values": VALUES.tolist(),
                                   "doubled as_numpy": NO_NUMPY}


def test_grpc(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    tensor = grpcclient.InferInput("INPUT0", list(VALUES.shape), "BF16")
    tensor.set_data_from_numpy(VALUES)
    result = client.infer("bf16", [tensor])
    client.close()
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), VALUES)
    assert json.loads(result.as_numpy("REPORT")[0])["input as_numpy"] == NO_NUMPY
