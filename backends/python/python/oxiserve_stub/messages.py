"""pb_utils' request and response types: InferenceRequest, InferenceResponse,
InferenceResponseSender, PreferredMemory, InferenceTrace, MemoryType.

User-facing only: no frames, sockets or arenas here. What needs the model instance (BLS,
sending a response, is_cancelled) goes through the instance's `Context` (context.py), a
narrow interface the entry point (instance.serve) gives to `InferenceRequest._ctx`; each
sender takes it from its request. Outside an instance process it is None.
"""

import asyncio
import enum
import json
import threading

from .argcheck import as_int, as_objects, as_str, as_str_list, fail
from .errors import TritonError, TritonModelException
from .tensors import Tensor

# pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL (the wire's FLAG_FINAL too: flags go to the
# server as given)
COMPLETE_FINAL = 1
# pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE (iterative sequences)
RELEASE_RESCHEDULE = 2
BLS_ONLY = "BLS is only supported during the 'execute' function."


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
    """A request's trace: a BLS call given it (trace=request.trace()) joins it."""

    __slots__ = ("_rid",)

    def __init__(self, rid=0):
        self._rid = rid  # the server's id of the request; 0: no request

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


def _tensor_list(value, function, argument):
    """A list of pb_utils.Tensor, as pybind11 converts it (TypeError for anything else but
    None items); None when an item is None (Triton's own check, the caller's text)."""
    if value.__class__ is list:
        for t in value:
            if t.__class__ is not Tensor:
                break
        else:
            return value[:]
    items = as_objects(value, Tensor, function, argument)
    return None if any(t is None for t in items) else items


_U32_MAX = (1 << 32) - 1
_U64_MAX = (1 << 64) - 1
_I64 = (-(1 << 63), (1 << 63) - 1)


class InferenceResponse:
    __slots__ = ("_outputs", "_error", "_params", "_block")

    def __init__(self, output_tensors=(), error=None, parameters=None):
        # pybind11's conversions first (TypeError), then Triton's check of the values
        outputs = _tensor_list(output_tensors, "InferenceResponse", "output_tensors")
        if error is not None and not isinstance(error, TritonError):
            raise TypeError("InferenceResponse(): error must be a pb_utils.TritonError or "
                            "None, not '%s'" % type(error).__name__)
        if outputs is None:
            raise TritonModelException(
                "Output tensor for inference response should not be empty.")
        self._outputs = outputs
        self._error = error
        self._params = "{}" if parameters is None else parameters_to_json(parameters)
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

    _ctx = None  # the instance's Context: set once by the entry point (instance.serve)

    def __init__(self, request_id="", correlation_id=0, inputs=None,
                 requested_output_names=None, model_name=None, model_version=-1, flags=0,
                 timeout=0, preferred_memory=None, trace=None, parameters=None):
        # pybind11's conversions first (TypeError; strings may be bytes), then Triton's
        # checks of the values (TritonModelException)
        f = "InferenceRequest"
        request_id = as_str(request_id, f, "request_id")
        if correlation_id is None:
            fail(f, "correlation_id", None)
        inputs = _tensor_list(inputs, f, "inputs")
        outputs = as_str_list(requested_output_names, f, "requested_output_names")
        model_name = as_str(model_name, f, "model_name")
        model_version = as_int(model_version, f, "model_version", *_I64)
        flags = as_int(flags, f, "flags", 0, _U32_MAX)
        timeout = as_int(timeout, f, "timeout", 0, _U64_MAX)
        if preferred_memory is not None and not isinstance(preferred_memory,
                                                           PreferredMemory):
            fail(f, "preferred_memory", preferred_memory)
        if trace is not None and not isinstance(trace, InferenceTrace):
            fail(f, "trace", trace)
        self._params = parameters_to_json(parameters)
        if isinstance(correlation_id, int):  # bool too, as pybind11's py::int_
            correlation_id = int(correlation_id)
        elif isinstance(correlation_id, str):
            correlation_id = str(correlation_id)
        else:
            raise TritonModelException("Correlation ID must be integer or string")
        if inputs is None:
            raise TritonModelException(
                "Input tensor for request with id '%s' and model name '%s' should not "
                "be empty." % (request_id, model_name))
        for o in outputs:
            if o == "":
                raise TritonModelException(
                    "Requested output name for request with id '%s' and model name '%s' "
                    "should not be empty." % (request_id, model_name))
        self._request_id = request_id
        self._corr = correlation_id
        self._inputs = inputs
        self._outputs = outputs
        self._model_name = model_name
        self._model_version = model_version
        self._flags = flags
        self._timeout = timeout
        self._rid = None
        self._sender = None
        self._block = None
        self._release_flags = 1
        self._preferred_memory = preferred_memory
        self._trace = trace

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
        if self._trace is not None:
            return self._trace
        return InferenceTrace(self._rid or 0)

    def set_release_flags(self, flags):
        """TRITONSERVER_REQUEST_RELEASE_ALL (1, the default) or _RESCHEDULE (2: a model
        with iterative sequences gets the request again in a later batch)."""
        self._release_flags = as_int(flags, "set_release_flags", "flags", 0, _U32_MAX)

    def get_response_sender(self):
        s = self._sender
        if s is None:
            s = self._sender = InferenceResponseSender(self)
        return s

    def is_cancelled(self):
        ctx = self._ctx
        if ctx is None or self._rid is None:
            return False
        return ctx.is_cancelled(self._rid)

    def exec(self, decoupled=False):
        ctx = self._ctx
        if ctx is None:
            raise TritonModelException(BLS_ONLY)
        return ctx.bls_exec(self, decoupled)

    def async_exec(self, decoupled=False):
        ctx = self._ctx
        if ctx is None:
            asyncio.get_running_loop()  # outside a coroutine, this error first
            raise TritonModelException(BLS_ONLY)
        return ctx.bls_async_exec(self, decoupled)


class InferenceResponseSender:
    __slots__ = ("_rid", "_outputs", "_lock", "_closed", "_sent", "_ctx")

    def __init__(self, request):
        # no reference to the request (no cycle: the inputs' block is released by
        # reference counting as soon as the request dies)
        self._rid = request._rid
        self._outputs = request._outputs
        self._lock = threading.Lock()
        self._closed = False
        self._sent = 0
        self._ctx = request._ctx

    def _update(self, response, flags):
        """Triton's UpdateStateAndCounters: rule checks, then state change."""
        ctx = self._ctx
        decoupled = ctx.decoupled if ctx is not None else False
        with self._lock:
            if not decoupled:
                if response is not None and self._sent > 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send more "
                        "than one response.")
                if response is None and flags == COMPLETE_FINAL and self._sent == 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send complete "
                        "final before sending a response.")
            if self._closed:
                raise TritonModelException(
                    "Unable to send response. Response sender has been closed.")
            if flags == COMPLETE_FINAL:
                self._closed = True
            if response is not None:
                self._sent += 1

    def send(self, response=None, flags=0):
        if flags != COMPLETE_FINAL and flags != 0:
            raise TritonModelException("Unable to send response. Unsupported flag provided.")
        if flags == 0 and response is None:
            raise TritonModelException(
                "Inference Response object must be provided when the response flags is "
                "set to zero.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TypeError("response must be a pb_utils.InferenceResponse or None")
        ctx = self._ctx
        if ctx is None or self._rid is None:
            raise TritonModelException(
                "Unable to send response. Response sender has no reference to the "
                "decoupled state of the model.")
        self._update(response, flags)
        ctx.send_response(self._rid, self._outputs, response, flags)

    def is_cancelled(self):
        ctx = self._ctx
        if ctx is None or self._rid is None:
            return False
        return ctx.is_cancelled(self._rid)

    def _close(self):
        """Closes the sender if still open; True if it was (its owner then sends the final
        error response)."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
        return True
