"""pb_utils called with arguments of the wrong type, after Triton's
qa/L0_backend_python/argument_validation: the model runs each call and reports
what it raised. Triton's stub is pybind11: a value of the wrong type raises
TypeError before the call runs; Triton's own checks of the values raise
TritonModelException (a None tensor in a list of inputs or outputs, an empty
tensor name, a correlation ID of another type). Strings may be bytes (numpy's
too): `InferenceRequest(model_name=b"...")` names the model."""

import json

import numpy as np
import pytest
import tritonclient.http as httpclient

from models import model_source
from python_models import PyModel, config, plain_model, serve

TME = "TritonModelException"
EMPTY_INPUT = ("Input tensor for request with id '' and model name '%s' should not be "
               "empty.")
BLS_OK = EMPTY_INPUT % "bls_target" + " | BLS [7]"

EXPECTED = {
    # InferenceRequest
    "request.inputs=[None]": TME,
    "request.inputs=None": "TypeError",
    "request.inputs=[1]": "TypeError",
    "request.model_name=None": "TypeError",
    "request.model_name=1": "TypeError",
    "request.model_name=str": BLS_OK,
    "request.model_name=bytes": BLS_OK,
    "request.model_name=np.bytes_": BLS_OK,
    "request.model_name=BYTES element": BLS_OK,
    "request.model_name=np.str_": BLS_OK,
    "request.model_name=unknown bytes": (
        EMPTY_INPUT % "no_such_model" + " | BLS error: Model no_such_model - Error when "
        "running inference: Failed for execute the inference request. Model "
        "'no_such_model' is not ready."),
    "request.requested_output_names=[None]": "TypeError",
    "request.requested_output_names=None": "TypeError",
    "request.requested_output_names=[1]": "TypeError",
    "request.correlation_id=None": "TypeError",
    "request.correlation_id=1.5": TME,
    "request.correlation_id=5": "int 5",
    "request.correlation_id=str": "str test_str_id-5",
    "request.correlation_id default": "int 0",
    "request.request_id=None": "TypeError",
    "request.request_id=1": "TypeError",
    "request.model_version=None": "TypeError",
    "request.model_version=1.5": "TypeError",
    "request.flags=None": "TypeError",
    "request.flags=-1": "TypeError",
    "request.timeout=None": "TypeError",
    "request.empty lists": "ok",
    # InferenceResponse
    "response.output_tensors=[None]": TME,
    "response.[None]": TME,
    "response.output_tensors=None": "TypeError",
    "response.output_tensors=[1]": "TypeError",
    "response.error=str": "TypeError",
    "response.output_tensors=[]": "ok",
    "response.positional": "ok",
    "response.default": "ok",
    # Tensor
    "tensor.name=None": "TypeError",
    "tensor.name=1": "TypeError",
    "tensor.data=None": "TypeError",
    "tensor.data=list": "TypeError",
    "tensor.data=np.int32": "TypeError",
    "tensor.data=str": "TypeError",
    "tensor.name='' data=None": "TypeError",
    "tensor.name=''": TME,
    "tensor.from_dlpack(None)": TME,
    "tensor.from_dlpack('', None)": TME,
    "tensor.from_dlpack(list)": TME,
    # Logger
    "log.level=None": "TypeError",
    "log.level=1": "TypeError",
    "log.level=str": "TypeError",
    "log.message=None": "TypeError",
    "log.message=1": "TypeError",
    "log_info(None)": "TypeError",
    "log_warn(None)": "TypeError",
    "log_error(None)": "TypeError",
    "log_verbose(None)": "TypeError",
    "log_info(1)": "TypeError",
    "log.unspecified": "ok",
    "log.Logger.LogLevel.INFO": "ok",
    "log.Logger.INFO": "ok",
    # TritonError
    "error.message=None": "TypeError",
    "error.code=None": "TypeError",
    "error.code=str": "TypeError",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    model = PyModel(
        "argument_validation", model_source("argument_validation"),
        config([("INPUT0", "INT32", [1])], [("REPORT", "BYTES", [1])]))
    target = plain_model("bls_target", model_source("identity"))
    with serve(tmp_path_factory.mktemp("py_argument_validation"), [model, target]) as server:
        client = httpclient.InferenceServerClient(server.url)
        tensor = httpclient.InferInput("INPUT0", [1], "INT32")
        tensor.set_data_from_numpy(np.array([1], dtype=np.int32))
        result = client.infer("argument_validation", [tensor])
        client.close()
    return json.loads(result.as_numpy("REPORT")[0])


def test_every_case_was_run(report):
    assert sorted(report) == sorted(EXPECTED)


@pytest.mark.parametrize("case", list(EXPECTED))
def test_argument(report, case):
    assert report[case] == EXPECTED[case]
