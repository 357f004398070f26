"""oxiserve's implementation of Triton's `triton_python_backend_utils` (import as pb_utils).

Helpers, constants and ModelConfig live here; the classes come from oxiserve_stub and are
also reachable as `c_python_backend_utils`.
"""

import json
import struct

import numpy as np

from oxiserve_stub.errors import TritonError, TritonModelException
from oxiserve_stub.metrics import MetricFamily
from oxiserve_stub.model_control import is_model_ready, load_model, unload_model
from oxiserve_stub.tensors import Tensor
from oxiserve_stub.tensors import deserialize_bytes as _deserialize_bytes
from oxiserve_stub.messages import (
    InferenceRequest, InferenceResponse, InferenceTrace, MemoryType, PreferredMemory,
    InferenceResponseSender, TRITONSERVER_MEMORY_CPU, TRITONSERVER_MEMORY_GPU)
from oxiserve_stub.bls import ResponseIterator
from oxiserve_stub.log import Logger, LogLevel

__all__ = [
    "TritonError", "TritonModelException", "Tensor", "InferenceRequest",
    "InferenceResponse", "InferenceTrace", "MemoryType", "PreferredMemory",
    "TRITONSERVER_MEMORY_CPU", "TRITONSERVER_MEMORY_GPU", "InferenceResponseSender",
    "ResponseIterator", "Logger", "LogLevel", "ModelConfig", "MetricFamily",
    "load_model", "unload_model", "is_model_ready", "TRITON_STRING_TO_NUMPY",
    "serialize_byte_tensor", "deserialize_bytes_tensor", "get_input_tensor_by_name",
    "get_output_tensor_by_name", "get_input_config_by_name", "get_output_config_by_name",
    "using_decoupled_model_transaction_policy", "triton_to_numpy_type",
    "numpy_to_triton_type", "triton_string_to_numpy",
    "TRITONSERVER_REQUEST_FLAG_SEQUENCE_START", "TRITONSERVER_REQUEST_FLAG_SEQUENCE_END",
    "TRITONSERVER_RESPONSE_COMPLETE_FINAL", "TRITONSERVER_REQUEST_RELEASE_ALL",
    "TRITONSERVER_REQUEST_RELEASE_RESCHEDULE",
]

TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

TRITON_STRING_TO_NUMPY = {
    "TYPE_BOOL": bool,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}

_CODE_TO_NUMPY = (None, np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8,
                  np.int16, np.int32, np.int64, np.float16, np.float32, np.float64,
                  np.object_)
_CODE_TO_NUMPY_MAP = {i: t for i, t in enumerate(_CODE_TO_NUMPY) if t is not None}
_NUMPY_TO_CODE = [(np.bool_, 1), (np.uint8, 2), (np.uint16, 3), (np.uint32, 4),
                  (np.uint64, 5), (np.int8, 6), (np.int16, 7), (np.int32, 8),
                  (np.int64, 9), (np.float16, 10), (np.float32, 11), (np.float64, 12),
                  (np.object_, 13), (np.bytes_, 13)]
_LEN = struct.Struct("<I")


def triton_string_to_numpy(triton_type_string):
    return TRITON_STRING_TO_NUMPY[triton_type_string]


def triton_to_numpy_type(data_type):
    try:
        return _CODE_TO_NUMPY_MAP.get(data_type)
    except TypeError:  # unhashable
        return None


def numpy_to_triton_type(data_type):
    for np_type, code in _NUMPY_TO_CODE:
        if data_type == np_type:
            return code
    return None


def serialize_byte_tensor(input_tensor):
    """Object/bytes_ array -> bytes in Triton's BYTES layout (u32 LE length + data per
    element, C order); () for an empty array; None for other dtypes."""
    if input_tensor.size == 0:
        return ()
    dt = input_tensor.dtype
    if dt == np.object_ or dt.type == np.bytes_:
        pack = _LEN.pack
        parts = []
        for item in input_tensor.ravel(order="C").tolist():
            if dt == np.object_ and type(item) is not bytes:
                item = str(item).encode("utf-8")
            parts.append(pack(len(item)))
            parts.append(item)
        return b"".join(parts)
    return None


def deserialize_bytes_tensor(encoded_tensor):
    """Triton's BYTES layout -> 1-D object array of bytes."""
    return _deserialize_bytes(encoded_tensor)


def get_input_tensor_by_name(inference_request, name):
    for t in inference_request.inputs():
        if t.name() == name:
            return t
    return None


def get_output_tensor_by_name(inference_response, name):
    for t in inference_response.output_tensors():
        if t.name() == name:
            return t
    return None


def _config_by_name(model_config, section, name):
    for props in model_config.get(section, ()):
        if props["name"] == name:
            return props
    return None


def get_input_config_by_name(model_config, name):
    return _config_by_name(model_config, "input", name)


def get_output_config_by_name(model_config, name):
    return _config_by_name(model_config, "output", name)


def using_decoupled_model_transaction_policy(model_config):
    policy = model_config.get("model_transaction_policy")
    if policy is not None:
        return policy["decoupled"]
    return False


# --------------------------------------------------------------------- ModelConfig

class ModelConfig:
    """The model configuration handed to `auto_complete_config` (texts of the ValueErrors
    are Triton's: they reach the load error the user sees)."""

    _INPUT_KEYS = ("name", "data_type", "dims", "optional")
    _OUTPUT_KEYS = ("name", "data_type", "dims")

    def __init__(self, model_config):
        self._model_config = json.loads(model_config)

    def as_dict(self):
        return self._model_config

    def _name(self):
        return self._model_config["name"]

    def set_max_batch_size(self, max_batch_size):
        current = self._model_config["max_batch_size"]
        if current > max_batch_size:
            raise ValueError(
                "configuration specified max_batch_size %s, but in auto-complete-config "
                "function for model '%s' specified max_batch_size %s"
                % (current, self._name(), max_batch_size))
        self._model_config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for scheduler in ("sequence_batching", "ensemble_scheduling"):
            if scheduler in self._model_config:
                raise ValueError(
                    "Configuration specified scheduling_choice as '%s', but "
                    "auto-complete-config function for model '%s' tries to set "
                    "scheduling_choice as 'dynamic_batching'" % (scheduler, self._name()))
        self._model_config.setdefault("dynamic_batching", {})

    def _check_tensor(self, kind, tensor, allowed, allowed_text):
        for prop in tensor:
            if prop not in allowed:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' contains "
                    "property other than %s." % (kind, tensor["name"], self._name(),
                                                 allowed_text))
        if "name" not in tensor:
            raise ValueError(
                "%s in auto-complete-config function for model '%s' is missing 'name' "
                "property." % (kind, self._name()))
        for prop in ("data_type", "dims"):
            if prop not in tensor:
                raise ValueError(
                    "%s '%s' in auto-complete-config function for model '%s' is missing "
                    "'%s' property." % (kind, tensor["name"], self._name(), prop))

    def _merge(self, kind, section, tensor):
        for existing in self._model_config[section]:
            if existing["name"] != tensor["name"]:
                continue
            if (existing["data_type"] != "TYPE_INVALID"
                    and existing["data_type"] != tensor["data_type"]):
                raise ValueError(
                    "unable to load model '%s', configuration expects datatype %s for %s "
                    "'%s', model provides %s" % (self._name(), existing["data_type"], kind,
                                                 tensor["name"], tensor["data_type"]))
            if existing["dims"] and existing["dims"] != tensor["dims"]:
                raise ValueError(
                    "model '%s', tensor '%s': the model expects dims %s but the model "
                    "configuration specifies dims %s" % (self._name(), tensor["name"],
                                                         tensor["dims"], existing["dims"]))
            if (kind == "input" and "optional" in existing and "optional" in tensor
                    and existing["optional"] != tensor["optional"]):
                raise ValueError(
                    "model '%s', tensor '%s': the model expects optional %s but the model "
                    "configuration specifies optional %s"
                    % (self._name(), tensor["name"], tensor["optional"],
                       existing["optional"]))
            existing["data_type"] = tensor["data_type"]
            existing["dims"] = tensor["dims"]
            if kind == "input" and "optional" in tensor:
                existing["optional"] = tensor["optional"]
            return
        self._model_config[section].append(tensor)

    def add_input(self, input):
        self._check_tensor("input", input, self._INPUT_KEYS,
                           "'name', 'data_type', 'dims' and 'optional'")
        self._merge("input", "input", input)

    def add_output(self, output):
        self._check_tensor("output", output, self._OUTPUT_KEYS,
                           "'name', 'data_type' and 'dims'")
        self._merge("output", "output", output)

    def set_model_transaction_policy(self, transaction_policy_dict):
        for prop in transaction_policy_dict:
            if prop != "decoupled":
                raise ValueError(
                    "model transaction property in auto-complete-config function for model "
                    "'%s' contains property other than 'decoupled'." % self._name())
        policy = self._model_config.setdefault("model_transaction_policy", {})
        if "decoupled" in transaction_policy_dict:
            new = transaction_policy_dict["decoupled"]
            if "decoupled" in policy and policy["decoupled"] != new:
                raise ValueError(
                    "trying to change decoupled property in auto-complete-config for model "
                    "'%s', which is already set to '%s'." % (self._name(),
                                                            policy["decoupled"]))
            policy["decoupled"] = new
