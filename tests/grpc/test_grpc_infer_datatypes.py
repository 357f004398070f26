"""gRPC identity round trips of every datatype: raw contents (what
tritonclient sends) and typed `contents` fields (built on a raw stub)."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2

from catalog import sample
from grpc_helpers import Stub, expect_rpc_error, infer_input
from models import DATATYPES

# The typed field of each datatype that has one, and how numpy values go in.
TYPED = {
    "BOOL": ("bool_contents", bool),
    "UINT8": ("uint_contents", int),
    "UINT16": ("uint_contents", int),
    "UINT32": ("uint_contents", int),
    "UINT64": ("uint64_contents", int),
    "INT8": ("int_contents", int),
    "INT16": ("int_contents", int),
    "INT32": ("int_contents", int),
    "INT64": ("int64_contents", int),
    "FP32": ("fp32_contents", float),
    "FP64": ("fp64_contents", float),
    "BYTES": ("bytes_contents", bytes),
}


def _same(got, want):
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == np.object_:
        assert [bytes(x) for x in got.ravel()] == [bytes(x) for x in want.ravel()]
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert np.array_equal(got, want), (got, want)
    if want.dtype.kind == "f":  # -0.0 stays negative
        assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.fixture(scope="module")
def stub(main_server):
    s = Stub(main_server.grpc_url)
    yield s
    s.close()


@pytest.mark.parametrize("datatype", list(DATATYPES))
def test_identity_batch_raw(grpc_client, datatype):
    """A batch of 3 rows through id_<datatype> as raw_input_contents."""
    array = sample(datatype, rows=3, cols=4)
    model = f"id_{datatype.lower()}"
    result = grpc_client.infer(
        model,
        [infer_input("INPUT0", array, datatype)],
        outputs=[grpcclient.InferRequestedOutput("OUTPUT0")],
        request_id="rt-1",
    )
    _same(result.as_numpy("OUTPUT0"), array)
    response = result.get_response()
    assert response.id == "rt-1"
    assert response.model_name == model and response.model_version == "1"
    out = result.get_output("OUTPUT0")
    assert out.datatype == datatype and list(out.shape) == [3, 4]


def test_all_datatypes_in_one_request(grpc_client):
    """max_batch_size 0: 14 inputs of 14 datatypes in one request; all outputs."""
    arrays = [(dt, sample(dt, rows=2, cols=3)) for dt in DATATYPES]
    inputs = [infer_input(f"INPUT{i}", a, dt) for i, (dt, a) in enumerate(arrays)]
    result = grpc_client.infer("nobatch_all", inputs)
    for i, (_, array) in enumerate(arrays):
        _same(result.as_numpy(f"OUTPUT{i}"), array)


def test_requested_outputs_only(grpc_client):
    a = np.array([[1, 2]], dtype=np.int32)
    b = np.array([[0.5, 1.5]], dtype=np.float32)
    result = grpc_client.infer(
        "pair",
        [infer_input("INPUT0", a, "INT32"), infer_input("INPUT1", b, "FP32")],
        outputs=[grpcclient.InferRequestedOutput("OUTPUT1")],
    )
    assert [o.name for o in result.get_response().outputs] == ["OUTPUT1"]
    _same(result.as_numpy("OUTPUT1"), b)


def test_empty_tensor(grpc_client):
    array = np.zeros((1, 0), dtype=np.float32)
    result = grpc_client.infer("id_fp32", [infer_input("INPUT0", array, "FP32")])
    assert result.as_numpy("OUTPUT0").shape == (1, 0)


def _typed_request(datatype, array):
    field, convert = TYPED[datatype]
    request = service_pb2.ModelInferRequest(model_name=f"id_{datatype.lower()}")
    tensor = request.inputs.add(name="INPUT0", datatype=datatype, shape=list(array.shape))
    values = [convert(v) for v in array.ravel()]
    getattr(tensor.contents, field).extend(values)
    return request


@pytest.mark.parametrize("datatype", list(TYPED))
def test_identity_typed_contents(stub, datatype):
    """Typed contents in, raw contents out, as Triton answers."""
    array = sample(datatype, rows=2, cols=3, binary=True)
    response = stub.ModelInfer(_typed_request(datatype, array))
    assert len(response.raw_output_contents) == 1
    assert not response.outputs[0].HasField("contents")
    _same(grpcclient.InferResult(response).as_numpy("OUTPUT0"), array)


def test_typed_contents_of_another_type_are_refused(stub):
    request = _typed_request("FP32", np.array([[1.0]], dtype=np.float32))
    request.inputs[0].datatype = "FP16"
    request.model_name = "id_fp16"
    expect_rpc_error(
        lambda: stub.ModelInfer(request),
        "INVALID_ARGUMENT",
        "unexpected explicit tensor data for input tensor 'INPUT0' for model 'id_fp16' of type "
        "'FP32', expected datatype 'FP16'",
    )


def test_two_typed_fields_are_refused(stub):
    request = _typed_request("INT64", np.array([[1]], dtype=np.int64))
    request.inputs[0].contents.fp32_contents.append(1.0)
    expect_rpc_error(
        lambda: stub.ModelInfer(request),
        "INVALID_ARGUMENT",
        "unexpected explicit tensor data for input tensor 'INPUT0'",
    )


def test_classification(grpc_client):
    """`classification` on a requested output: top-k "value:index:label" strings."""
    scores = np.array([[0.5, 3.0, -1.0, 2.0], [9.0, 8.0, 7.0, 6.0]], dtype=np.float32)
    result = grpc_client.infer(
        "classify",
        [infer_input("INPUT0", scores, "FP32")],
        outputs=[grpcclient.InferRequestedOutput("OUTPUT0", class_count=2)],
    )
    assert result.get_output("OUTPUT0").datatype == "BYTES"
    got = [[x.decode() for x in row] for row in result.as_numpy("OUTPUT0")]
    assert got == [["3.000000:1:one", "2.000000:3:three"], ["9.000000:0:zero", "8.000000:1:one"]]


def test_tensor_over_the_default_grpc_message_limit(grpc_client):
    """16 MiB each way: well over gRPC's usual 4 MiB default."""
    array = np.random.default_rng(7).random((1, 4 * 1024 * 1024), dtype=np.float32)
    result = grpc_client.infer("id_fp32", [infer_input("INPUT0", array, "FP32")])
    _same(result.as_numpy("OUTPUT0"), array)
