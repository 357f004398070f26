"""Responses on the wire: the `response`s of an ExecuteDone frame and the Send frames of
response senders (`_frames.encode_responses` in C where built; outputs go to arena_out).

Reads pb_utils' InferenceResponse attributes; `conn` is the transport (its arena_out and
`send`).
"""

from . import protocol as P
from .arena_io import write_tensors
from .compiled import FRAMES
from .errors import TritonError

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


def _send(conn, rid, frame):
    """A Send frame for request rid: to the server, or to the lane it came through."""
    if rid >= P.LANE_RID:
        conn.lane_server.answer(rid, frame)
    else:
        conn.send(frame)


def send_response(conn, rid, requested, response, flags):
    out = [P.U32.pack(flags)]
    if response is None:
        out.append(b"\x00")
    else:
        out.append(b"\x01")
        encode_responses(conn, [(response, requested)], out)
    _send(conn, rid, P.frame(P.SEND, rid, out))


def send_final_error(conn, rid, message):
    """A Send frame closing request rid with an INTERNAL error response, for an execution
    that failed (the request counts as failed)."""
    out = [P.U32.pack(FINAL | P.FLAG_FAILED), b"\x01"]
    error_response_parts(out, TritonError.INTERNAL, message)
    _send(conn, rid, P.frame(P.SEND, rid, out))
