"""pb_utils.InferenceRequest / InferenceResponse / PreferredMemory / InferenceTrace."""

import enum
import json

from . import conn as _conn
from . import protocol as P
from .errors import TritonError, TritonModelException, not_supported
from .tensors import Tensor


class MemoryType(enum.IntEnum):
    TRITONSERVER_MEMORY_GPU = 0
    TRITONSERVER_MEMORY_CPU = 1


TRITONSERVER_MEMORY_GPU = MemoryType.TRITONSERVER_MEMORY_GPU
TRITONSERVER_MEMORY_CPU = MemoryType.TRITONSERVER_MEMORY_CPU


class PreferredMemory:
    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


class InferenceTrace:
    def get_context(self):
        return None


def parameters_to_json(parameters):
    if parameters is None:
        return "{}"
    if not isinstance(parameters, dict):
        raise TritonModelException("Expect <class 'dict'>, got " + str(type(parameters)))
    for k, v in parameters.items():
        if not isinstance(k, str):
            raise TritonModelException(
                "Expect parameters keys to have type str, found type " + str(type(k)))
        if not isinstance(v, (bool, int, str)):
            raise TritonModelException(
                "Expect parameters values to have type bool/int/str, found type "
                + str(type(v)))
    return json.dumps(parameters)


def _check_tensors(tensors, what):
    tensors = list(tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError("%s must be a list of pb_utils.Tensor, found %s" % (what, type(t)))
    return tensors


class InferenceResponse:
    __slots__ = ("_outputs", "_error", "_params", "_block")

    def __init__(self, output_tensors=None, error=None, parameters=None):
        self._outputs = [] if output_tensors is None else _check_tensors(
            output_tensors, "output_tensors")
        if error is not None and not isinstance(error, TritonError):
            raise TypeError("error must be a pb_utils.TritonError or None")
        self._error = error
        self._params = parameters_to_json(parameters)
        self._block = None

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        return self._params


class InferenceRequest:
    """A request given to execute (from the server) or built by the model for BLS."""

    __slots__ = ("_request_id", "_corr", "_inputs", "_outputs", "_model_name",
                 "_model_version", "_flags", "_timeout", "_params", "_rid", "_sender",
                 "_block", "_release_flags", "_preferred_memory", "_trace", "__weakref__")

    def __init__(self, request_id="", correlation_id=0, inputs=None,
                 requested_output_names=None, model_name=None, model_version=-1, flags=0,
                 timeout=0, preferred_memory=None, trace=None, parameters=None):
        if inputs is None or requested_output_names is None or model_name is None:
            raise TypeError(
                "InferenceRequest(): inputs, requested_output_names and model_name are "
                "required")
        if not isinstance(correlation_id, (int, str)) or isinstance(correlation_id, bool):
            raise TritonModelException("Correlation ID must be integer or string")
        self._request_id = str(request_id)
        self._corr = correlation_id
        self._inputs = _check_tensors(inputs, "inputs")
        self._outputs = [str(o) for o in requested_output_names]
        self._model_name = str(model_name)
        self._model_version = int(model_version)
        self._flags = int(flags)
        self._timeout = int(timeout)
        self._params = parameters_to_json(parameters)
        self._rid = None
        self._sender = None
        self._block = None
        self._release_flags = 1
        self._preferred_memory = preferred_memory
        self._trace = trace
        for t in self._inputs:
            if t.name() == "":
                raise TritonModelException(
                    "Input tensor for request with id '%s' and model name '%s' should not "
                    "be empty." % (self._request_id, self._model_name))
        for o in self._outputs:
            if o == "":
                raise TritonModelException(
                    "Requested output name for request with id '%s' and model name '%s' "
                    "should not be empty." % (self._request_id, self._model_name))

    def inputs(self):
        return self._inputs

    def request_id(self):
        return self._request_id

    def correlation_id(self):
        return self._corr

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        self._flags = int(flags)

    def timeout(self):
        return self._timeout

    def parameters(self):
        return self._params

    def requested_output_names(self):
        return self._outputs

    def model_name(self):
        return self._model_name

    def trace(self):
        return self._trace if self._trace is not None else InferenceTrace()

    def set_release_flags(self, flags):
        if flags != 1:
            not_supported("InferenceRequest.set_release_flags with "
                          "TRITONSERVER_REQUEST_RELEASE_RESCHEDULE")
        self._release_flags = flags

    def get_response_sender(self):
        s = self._sender
        if s is None:
            from .sender import InferenceResponseSender
            s = self._sender = InferenceResponseSender(self)
        return s

    def is_cancelled(self):
        return is_cancelled(self._rid)

    def exec(self, decoupled=False):
        from .bls import bls_exec
        return bls_exec(self, decoupled)

    def async_exec(self, decoupled=False):
        from .bls import bls_async_exec
        return bls_async_exec(self, decoupled)


def is_cancelled(rid):
    c = _conn.CONN
    if rid is None or c is None:
        return False
    import queue
    q = queue.SimpleQueue()
    cid = c.next_id()
    c.call(P.IS_CANCELLED, cid, [P.U64.pack(rid)], q.put)
    return bool(c.take(q))
