"""After Triton's qa/L0_backend_python/argument_validation: pb_utils' constructors and
Logger called with arguments of the wrong type. Each case's outcome goes back as JSON:
"ok" (or the value a getter returns) or the name of the exception raised."""

import json

import numpy as np
import triton_python_backend_utils as pb_utils

ARRAY = np.asarray([1, 2], dtype=np.int32)


def tensors(name):
    # (pb_utils' classes exist once the model runs, not when Triton imports model.py)
    return [pb_utils.Tensor(name, ARRAY)]


def request(**kwargs):
    args = {"inputs": tensors("INPUT0"), "model_name": "my_model",
            "requested_output_names": ["out"]}
    args.update(kwargs)
    return pb_utils.InferenceRequest(**args)


def _named(model_name):
    """The model name a request made with `model_name` carries: in the text of Triton's
    empty-input error, and in a BLS call to the model `bls_target` (an identity)."""
    try:
        request(inputs=[None], model_name=model_name)
    except pb_utils.TritonModelException as e:
        text = str(e).split("\n")[0]
    inputs = [pb_utils.Tensor("INPUT0", np.array([7], dtype=np.int32))]
    response = request(inputs=inputs, model_name=model_name,
                       requested_output_names=["OUTPUT0"]).exec()
    if response.has_error():
        return text + " | BLS error: " + response.error().message()
    out = pb_utils.get_output_tensor_by_name(response, "OUTPUT0").as_numpy().tolist()
    return text + " | BLS %s" % out


def _corr(value):
    corr = request(correlation_id=value).correlation_id()
    return "%s %s" % (type(corr).__name__, corr)


def _default_corr():
    corr = request().correlation_id()
    return "%s %s" % (type(corr).__name__, corr)


def logger():
    return pb_utils.Logger


CASES = {
    # InferenceRequest
    "request.inputs=[None]": lambda: request(inputs=[None]),
    "request.inputs=None": lambda: request(inputs=None),
    "request.inputs=[1]": lambda: request(inputs=[1]),
    "request.model_name=None": lambda: request(model_name=None),
    "request.model_name=1": lambda: request(model_name=1),
    "request.model_name=str": lambda: _named("bls_target"),
    "request.model_name=bytes": lambda: _named(b"bls_target"),
    "request.model_name=np.bytes_": lambda: _named(np.bytes_(b"bls_target")),
    "request.model_name=BYTES element": lambda: _named(
        np.array([b"bls_target"], dtype=np.object_)[0]),
    "request.model_name=np.str_": lambda: _named(np.str_("bls_target")),
    "request.model_name=unknown bytes": lambda: _named(b"no_such_model"),
    "request.requested_output_names=[None]": lambda: request(requested_output_names=[None]),
    "request.requested_output_names=None": lambda: request(requested_output_names=None),
    "request.requested_output_names=[1]": lambda: request(requested_output_names=[1]),
    "request.correlation_id=None": lambda: request(correlation_id=None),
    "request.correlation_id=1.5": lambda: request(correlation_id=1.5),
    "request.correlation_id=5": lambda: _corr(5),
    "request.correlation_id=str": lambda: _corr("test_str_id-5"),
    "request.correlation_id default": _default_corr,
    "request.request_id=None": lambda: request(request_id=None),
    "request.request_id=1": lambda: request(request_id=1),
    "request.model_version=None": lambda: request(model_version=None),
    "request.model_version=1.5": lambda: request(model_version=1.5),
    "request.flags=None": lambda: request(flags=None),
    "request.flags=-1": lambda: request(flags=-1),
    "request.timeout=None": lambda: request(timeout=None),
    "request.empty lists": lambda: request(requested_output_names=[], inputs=[]) and "ok",
    # InferenceResponse
    "response.output_tensors=[None]": lambda: pb_utils.InferenceResponse(output_tensors=[None]),
    "response.[None]": lambda: pb_utils.InferenceResponse([None]),
    "response.output_tensors=None": lambda: pb_utils.InferenceResponse(output_tensors=None),
    "response.output_tensors=[1]": lambda: pb_utils.InferenceResponse(output_tensors=[1]),
    "response.error=str": lambda: pb_utils.InferenceResponse(tensors("OUTPUT0"), error="x"),
    "response.output_tensors=[]": lambda: pb_utils.InferenceResponse(output_tensors=[]),
    "response.positional": lambda: pb_utils.InferenceResponse(tensors("OUTPUT0")),
    "response.default": lambda: pb_utils.InferenceResponse(),
    # Tensor
    "tensor.name=None": lambda: pb_utils.Tensor(None, ARRAY),
    "tensor.name=1": lambda: pb_utils.Tensor(1, ARRAY),
    "tensor.data=None": lambda: pb_utils.Tensor("OUTPUT0", None),
    "tensor.data=list": lambda: pb_utils.Tensor("OUTPUT0", [1, 2]),
    "tensor.data=np.int32": lambda: pb_utils.Tensor("OUTPUT0", np.int32(3)),
    "tensor.data=str": lambda: pb_utils.Tensor("OUTPUT0", "abc"),
    "tensor.name='' data=None": lambda: pb_utils.Tensor("", None),
    "tensor.name=''": lambda: pb_utils.Tensor("", ARRAY),
    "tensor.from_dlpack(None)": lambda: pb_utils.Tensor.from_dlpack("OUTPUT0", None),
    "tensor.from_dlpack('', None)": lambda: pb_utils.Tensor.from_dlpack("", None),
    "tensor.from_dlpack(list)": lambda: pb_utils.Tensor.from_dlpack("OUTPUT0", [1, 2]),
    # Logger
    "log.level=None": lambda: logger().log("Invalid Level", None),
    "log.level=1": lambda: logger().log("Invalid Level", 1),
    "log.level=str": lambda: logger().log("Invalid Level", "INFO"),
    "log.message=None": lambda: logger().log(None),
    "log.message=1": lambda: logger().log(1),
    "log_info(None)": lambda: logger().log_info(None),
    "log_warn(None)": lambda: logger().log_warn(None),
    "log_error(None)": lambda: logger().log_error(None),
    "log_verbose(None)": lambda: logger().log_verbose(None),
    "log_info(1)": lambda: logger().log_info(1),
    "log.unspecified": lambda: logger().log("Level unspecified"),
    "log.Logger.LogLevel.INFO": lambda: logger().log("INFO", logger().LogLevel.INFO),
    "log.Logger.INFO": lambda: logger().log("Level INFO", logger().INFO),
    # TritonError
    "error.message=None": lambda: pb_utils.TritonError(None),
    "error.code=None": lambda: pb_utils.TritonError("x", None),
    "error.code=str": lambda: pb_utils.TritonError("x", "INTERNAL"),
}


def run(case):
    try:
        value = case()
    except Exception as e:
        return type(e).__name__
    return value if isinstance(value, str) else "ok"


class TritonPythonModel:
    def execute(self, requests):
        report = json.dumps({name: run(case) for name, case in CASES.items()})
        out = np.array([report.encode()], dtype=np.object_)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("REPORT", out)])
                for _ in requests]
