"""Helpers of the gRPC tests: error checks, raw stubs, tensors of every datatype."""

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException


def expect_grpc_error(call, code, *needles):
    """Runs `call`, which must raise an error with gRPC `code` (e.g. "NOT_FOUND")
    whose message names every needle; returns the message."""
    with pytest.raises(InferenceServerException) as info:
        call()
    error = info.value
    assert error.status() == f"StatusCode.{code}", f"{error.status()}: {error.message()}"
    for needle in needles:
        assert needle in error.message(), error.message()
    return error.message()


def expect_rpc_error(call, code, *needles):
    """Like `expect_grpc_error`, for calls made on a raw stub (grpc.RpcError)."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    error = info.value
    assert error.code() == getattr(grpc.StatusCode, code), f"{error.code()}: {error.details()}"
    for needle in needles:
        assert needle in error.details(), error.details()
    return error.details()


class Stub:
    """The generated stub of `inference.GRPCInferenceService` on its own channel,
    for messages tritonclient does not build (typed contents, odd parameters)."""

    def __init__(self, url):
        self.channel = grpc.insecure_channel(url)
        self.stub = service_pb2_grpc.GRPCInferenceServiceStub(self.channel)

    def __getattr__(self, name):
        return getattr(self.stub, name)

    def close(self):
        self.channel.close()


def infer_input(name, array, datatype):
    """An InferInput holding `array` (BF16 given as float32)."""
    tensor = grpcclient.InferInput(name, list(array.shape), datatype)
    tensor.set_data_from_numpy(array)
    return tensor


def int32_request(model, values=(1, 2, 3), **fields):
    """A raw ModelInferRequest of INPUT0 INT32 [1, len(values)]."""
    request = service_pb2.ModelInferRequest(model_name=model, **fields)
    request.inputs.add(name="INPUT0", datatype="INT32", shape=[1, len(values)])
    request.raw_input_contents.append(np.array(values, dtype=np.int32).tobytes())
    return request
