"""InferenceResponseSender and the encoding of responses (outputs go to arena_out)."""

import threading

from . import conn as _conn
from . import protocol as P
from .compiled import FRAMES
from .errors import TritonError, TritonModelException
from .messages import InferenceResponse, is_cancelled
from .tensors import write_tensors

FINAL = P.FLAG_FINAL
# the start of a `response` with no error and no parameters
_OK_HEAD = P.U32.pack(P.NO_ERROR) + P.U32.pack(0) + P.U32.pack(0)


def _wanted(resp, requested):
    """The response's output tensors, pruned to `requested` when that list is non-empty."""
    if not requested:
        return resp._outputs
    return [t for t in resp._outputs if t._name in requested]


def encode_responses(conn, pairs, out):
    """Append `u64 block` and the wire `response` of each (response, requested) pair to
    out. All output tensors go into one fresh arena_out block; when they cannot be
    written, every response of the frame becomes an error response."""
    if FRAMES is not None:
        encoded = FRAMES.encode_responses(pairs, conn.alloc_block, conn.out_addr,
                                          conn.out_size)
        if encoded is not None:  # None: a response the code below must encode
            out.append(encoded)
            return
    try:
        block, wire = write_tensors(conn, [_wanted(r, req) for r, req in pairs])
        failed = None
    except Exception as e:
        block, wire = P.NO_BLOCK, [()] * len(pairs)
        failed = TritonError("failed to write the output tensors of a response: %s" % e)
    out.append(P.U64.pack(block))
    for (resp, _), tensors in zip(pairs, wire):
        err = failed or resp._error
        params = resp._params if resp._params != "{}" else ""
        if err is None and not params:
            out.append(_OK_HEAD)
            out.append(P.U16.pack(len(tensors)))
            for t in tensors:
                P.p_tensor(out, *t)
        elif err is None:
            P.p_response(out, None, "", params, tensors)
        else:
            P.p_response(out, err._code, err._message, params, tensors)


def error_response_parts(out, code, message):
    out.append(P.U64.pack(P.NO_BLOCK))
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
        encode_responses(conn, [(response, requested)], out)
    conn.send(P.frame(P.SEND, rid, out))
