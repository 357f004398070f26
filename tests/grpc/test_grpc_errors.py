"""Bad gRPC inference requests: the gRPC code real Triton 2.51 gives and a
message naming what is wrong; the server keeps serving after each."""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2

from grpc_helpers import Stub, expect_grpc_error, expect_rpc_error, infer_input, int32_request


@pytest.fixture(scope="module")
def stub(main_server):
    s = Stub(main_server.grpc_url)
    yield s
    s.close()


def _int32(values=(1, 2, 3), name="INPUT0", rows=1):
    array = np.array([list(values)] * rows, dtype=np.int32)
    return infer_input(name, array, "INT32")


# id, model, version, inputs, outputs, code, substrings of the message
CASES = [
    ("unknown_model", "no_such_model", "", [_int32()], None, "NOT_FOUND",
     ["Request for unknown model: 'no_such_model' is not found"]),
    ("unknown_version", "id_int32", "7", [_int32()], None, "NOT_FOUND",
     ["'id_int32' version 7 is not found"]),
    ("malformed_version", "id_int32", "v1", [_int32()], None, "INVALID_ARGUMENT",
     ["version string 'v1'"]),
    ("missing_input", "pair", "", [_int32()], None, "INVALID_ARGUMENT", ["INPUT1", "pair"]),
    ("unexpected_input", "id_int32", "", [_int32(), _int32(name="EXTRA")], None,
     "INVALID_ARGUMENT", ["EXTRA"]),
    ("wrong_datatype", "id_int32", "",
     [infer_input("INPUT0", np.ones((1, 3), np.float32), "FP32")], None, "INVALID_ARGUMENT",
     ["INPUT0", "FP32", "INT32"]),
    ("shape_without_batch_dim", "id_int32", "",
     [infer_input("INPUT0", np.ones(3, np.int32), "INT32")], None, "INVALID_ARGUMENT",
     ["INPUT0", "id_int32"]),
    ("batch_over_max", "id_int32", "", [_int32(rows=9)], None, "INVALID_ARGUMENT",
     ["id_int32", "8"]),
    ("unknown_output", "id_int32", "", [_int32()], [grpcclient.InferRequestedOutput("NOPE")],
     "INVALID_ARGUMENT", ["NOPE", "id_int32"]),
]


@pytest.mark.parametrize(
    "model,version,inputs,outputs,code,needles", [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_request(grpc_client, model, version, inputs, outputs, code, needles):
    expect_grpc_error(
        lambda: grpc_client.infer(model, inputs, model_version=version, outputs=outputs),
        code,
        *needles,
    )
    assert grpc_client.is_server_ready()
    result = grpc_client.infer("id_int32", [_int32()])
    assert result.as_numpy("OUTPUT0").tolist() == [[1, 2, 3]]


def test_raw_contents_that_do_not_fill_the_shape(stub):
    request = int32_request("id_int32")
    request.inputs[0].shape[:] = [1, 4]
    expect_rpc_error(lambda: stub.ModelInfer(request), "INVALID_ARGUMENT", "INPUT0")


def test_an_input_without_data(stub):
    request = int32_request("pair")
    request.inputs.add(name="INPUT1", datatype="FP32", shape=[1, 3])
    expect_rpc_error(
        lambda: stub.ModelInfer(request),
        "INVALID_ARGUMENT",
        "unable to find data for input tensor 'INPUT1' for model 'pair' in request.",
    )


def test_contents_beside_raw_contents(stub):
    request = int32_request("pair")
    second = request.inputs.add(name="INPUT1", datatype="FP32", shape=[1, 1])
    second.contents.fp32_contents.append(1.0)
    expect_rpc_error(
        lambda: stub.ModelInfer(request),
        "INVALID_ARGUMENT",
        "contents field must not be specified when using raw_input_contents for 'INPUT1' for "
        "model 'pair'",
    )


@pytest.mark.oxiserve_only
def test_surplus_raw_contents_are_refused(stub):
    # Triton ignores raw contents no input reads.
    request = int32_request("id_int32")
    request.raw_input_contents.append(b"\0" * 12)
    expect_rpc_error(
        lambda: stub.ModelInfer(request),
        "INVALID_ARGUMENT",
        "2 raw_input_contents given for model 'id_int32' but only 1 of its inputs read one",
    )


def _with_parameter(key, **value):
    request = int32_request("id_int32")
    request.parameters[key].CopyFrom(service_pb2.InferParameter(**value))
    return request


@pytest.mark.parametrize(
    "key,value,needle",
    [
        ("triton_other", {"bool_param": True}, "parameter keys starting with 'triton_' are reserved"),
        ("sequence_start", {"int64_param": 1}, "invalid value type for 'sequence_start' parameter"),
        ("priority", {"int64_param": -1}, "invalid value for 'priority', expected value >= 0."),
        ("timeout", {"string_param": "x"}, "invalid value type for 'timeout' parameter"),
        ("custom", {"uint64_param": 1},
         "invalid value type for 'custom' parameter, expected int64_param, bool_param, or "
         "string_param."),
        ("triton_enable_empty_final_response", {"int64_param": 1},
         "invalid value type for 'triton_enable_empty_final_response' parameter, expected "
         "bool_param."),
    ],
)
def test_request_parameters_checked_as_triton_does(stub, key, value, needle):
    expect_rpc_error(lambda: stub.ModelInfer(_with_parameter(key, **value)), "INVALID_ARGUMENT", needle)


def test_custom_request_parameters_of_each_type_are_accepted(stub):
    request = int32_request("id_int32", id="with-params")
    for key, value in [("b", {"bool_param": True}), ("i", {"int64_param": -2}),
                       ("s", {"string_param": "x"}), ("d", {"double_param": 0.5})]:
        request.parameters[key].CopyFrom(service_pb2.InferParameter(**value))
    response = stub.ModelInfer(request)
    assert response.id == "with-params"


def test_a_garbage_message_is_refused_and_the_server_keeps_serving(stub, grpc_client):
    call = stub.channel.unary_unary(
        "/inference.GRPCInferenceService/ModelInfer",
        request_serializer=lambda raw: raw,
        response_deserializer=lambda raw: raw,
    )
    expect_rpc_error(lambda: call(b"\xff\xff\xff\xff"), "INTERNAL")
    assert grpc_client.is_server_ready()


def test_unknown_rpc_is_unimplemented(stub):
    call = stub.channel.unary_unary(
        "/inference.GRPCInferenceService/NoSuchCall",
        request_serializer=lambda raw: raw,
        response_deserializer=lambda raw: raw,
    )
    expect_rpc_error(lambda: call(b""), "UNIMPLEMENTED")
