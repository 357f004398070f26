"""InferenceResponseSender and the encoding of responses (outputs go to arena_out)."""

import threading

from . import conn as _conn
from . import protocol as P
from .errors import TritonError, TritonModelException
from .messages import InferenceResponse, is_cancelled
from .tensors import write_tensor

FINAL = P.FLAG_FINAL


def encode_response(conn, resp, requested, out):
    """Append the wire `response` of resp to out. Output tensors are copied into fresh
    arena_out blocks; outputs not in `requested` are dropped when that list is non-empty.
    A failure to write the tensors becomes an error response (blocks freed)."""
    err = resp._error
    tensors = []
    allocated = []
    try:
        for t in resp._outputs:
            if requested and t._name not in requested:
                continue
            tensors.append(write_tensor(conn, t, allocated))
    except Exception as e:
        for off in allocated:
            conn.alloc.free(off)
        tensors = []
        err = TritonError("failed to write the output tensors of a response: %s" % e)
    if err is None:
        P.p_response(out, None, "", resp._params if resp._params != "{}" else "", tensors)
    else:
        P.p_response(out, err._code, err._message,
                     resp._params if resp._params != "{}" else "", tensors)


def error_response_parts(out, code, message):
    P.p_response(out, code, message, "", ())


class InferenceResponseSender:
    __slots__ = ("_rid", "_outputs", "_lock", "_closed", "_sent")

    def __init__(self, request):
        # no reference to the request (no cycle: the inputs' block is released by
        # reference counting as soon as the request dies)
        self._rid = request._rid
        self._outputs = request._outputs
        self._lock = threading.Lock()
        self._closed = False
        self._sent = 0

    def _update(self, response, flags):
        """Triton's UpdateStateAndCounters: rule checks, then state change."""
        c = _conn.CONN
        decoupled = c.decoupled if c is not None else False
        with self._lock:
            if not decoupled:
                if response is not None and self._sent > 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send more "
                        "than one response.")
                if response is None and flags == FINAL and self._sent == 0:
                    raise TritonModelException(
                        "Unable to send response. Non-decoupled model cannot send complete "
                        "final before sending a response.")
            if self._closed:
                raise TritonModelException(
                    "Unable to send response. Response sender has been closed.")
            if flags == FINAL:
                self._closed = True
            if response is not None:
                self._sent += 1

    def send(self, response=None, flags=0):
        if flags != FINAL and flags != 0:
            raise TritonModelException("Unable to send response. Unsupported flag provided.")
        if flags == 0 and response is None:
            raise TritonModelException(
                "Inference Response object must be provided when the response flags is "
                "set to zero.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TypeError("response must be a pb_utils.InferenceResponse or None")
        c = _conn.CONN
        if c is None or self._rid is None:
            raise TritonModelException(
                "Unable to send response. Response sender has no reference to the "
                "decoupled state of the model.")
        self._update(response, flags)
        send_response(c, self._rid, self._outputs, response, flags)

    def is_cancelled(self):
        return is_cancelled(self._rid)

    def _close_with_error(self, conn, message):
        """Close (if still open) with an INTERNAL error response; True if it was open."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
        out = [P.U32.pack(FINAL), b"\x01"]
        error_response_parts(out, TritonError.INTERNAL, message)
        conn.send(P.frame(P.SEND, self._rid, out))
        return True


def send_response(conn, rid, requested, response, flags):
    out = [P.U32.pack(flags)]
    if response is None:
        out.append(b"\x00")
    else:
        out.append(b"\x01")
        encode_response(conn, response, requested, out)
    conn.send(P.frame(P.SEND, rid, out))
