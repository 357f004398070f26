"""BLS: what InferenceRequest.exec / async_exec do (a BLS frame out, BlsResponse frames
back as InferenceResponses) and pb_utils.ResponseIterator.

Sits between the two sides: reads pb_utils' types (messages.py) and speaks the transport
(`conn`: conn.py), which it is given explicitly: `decode_bls_response` is handed to the
Conn by the entry point, the exec functions are bound to the instance's Context and
Conn once (context.py).
"""

import asyncio
import json
import queue
import struct

import numpy as np

from . import protocol as P
from .arena_io import in_block, write_tensors
from .compiled import FRAMES
from .errors import TritonError, TritonModelException
from .execute_frame import decode_tensors
from .lane_calls import LaneCalls, LaneError
from .messages import BLS_ONLY, InferenceResponse


_HEAD = struct.Struct("<BBQ")  # final, has_response, block
_CODE_LEN = struct.Struct("<II").unpack_from  # error code, message length
_IDS = struct.Struct("<qQIBQ")  # model version, block, flags, correlation kind and u64
_U32 = P.U32.unpack_from
_U16 = P.U16.unpack_from
_U64 = P.U64.unpack_from


def decode_bls_response(conn, buf, p, end):
    """Reader thread: the BlsResponse body in buf[p:end] -> (final, InferenceResponse or
    None), its tensors viewing arena_in. Raises ProtocolError, ValueError, IndexError or
    struct.error on a malformed body."""
    if end - p == 2:
        final, has = buf[p], buf[p + 1]
        if final > 1 or has:
            raise P.ProtocolError("bad BlsResponse")
        return final == 1, None
    final, has, block = _HEAD.unpack_from(buf, p)
    if final > 1 or has != 1:
        raise P.ProtocolError("bad BlsResponse")
    owner, base = in_block(conn, block)
    resp = _response(buf, p + 10, end, base, block)
    resp._block = owner
    return final == 1, resp


def _response(buf, p, end, base, block, internal=False):
    """The wire `response` in buf[p:end] as an InferenceResponse, its tensors viewing
    `base` (which starts at offset `block`). With `internal`, as the server's BlsResponse
    would carry it after the called model's process made it: an error is INTERNAL, the
    parameters written as the server writes them."""
    code, k = _CODE_LEN(buf, p)
    message = str(buf[p + 8:p + 8 + k], "utf-8")
    p += 8 + k
    k = _U32(buf, p)[0]
    params = str(buf[p + 4:p + 4 + k], "utf-8")
    p += 4 + k
    n = _U16(buf, p)[0]
    tensors, p = decode_tensors(buf, p + 2, end, n, base, 0 if base is None else len(base),
                                block)
    if p != end:
        raise P.ProtocolError("response of %d bytes, %d decoded" % (end, p))
    resp = InferenceResponse.__new__(InferenceResponse)
    resp._outputs = tensors
    if code == P.NO_ERROR:
        resp._error = None
    else:
        resp._error = TritonError(message, TritonError.INTERNAL if internal else code)
    if internal and params not in ("", "{}"):
        params = json.dumps(json.loads(params), separators=(",", ":"), sort_keys=True)
    resp._params = params or "{}"
    resp._block = None
    return resp


def _encode_inputs(c, inputs):
    """(block, bytes): `inputs` copied into one arena_out block, and their u16 count and
    wire descriptors (`_frames.encode_tensors` in C where built)."""
    if FRAMES is not None:
        encoded = FRAMES.encode_tensors(inputs, c.alloc_block, c.out_addr, c.out_size)
        if encoded is not None:  # None: a tensor the code below must write
            return encoded
    block, (tensors,) = write_tensors(c, [inputs])
    out = [P.U16.pack(len(tensors))]
    for t in tensors:
        P.p_tensor(out, *t)
    return block, b"".join(out)


def _send_bls(ctx, c, request, decoupled, make_waiter):
    if not ctx.bls_allowed:
        raise TritonModelException(BLS_ONLY)
    corr = request._corr
    if isinstance(corr, str):
        ck, cu, cs = 2, 0, corr
    else:
        ck, cu, cs = (1 if corr else 0), corr, ""
    try:
        block, inputs = _encode_inputs(c, request._inputs)
    except Exception as e:
        raise TritonModelException(str(e))
    out = [b"\x01" if decoupled else b"\x00"]
    P.p_str(out, request._model_name)
    out.append(_IDS.pack(request._model_version, block, request._flags, ck, cu))
    P.p_str(out, cs)
    P.p_str(out, request._request_id)
    P.p_str(out, request._params)
    out.append(P.U64.pack(request._timeout))
    out.append(inputs)
    out.append(P.U16.pack(len(request._outputs)))
    for o in request._outputs:
        P.p_str(out, o)
    trace = request._trace
    out.append(P.U64.pack(trace._rid if trace is not None else 0))
    bls_id = c.next_id()
    c.call(P.BLS, bls_id, out, make_waiter(c, bls_id))
    return c, bls_id


def _collect_one(c, q):
    resp = None
    while True:
        final, r = c.take(q)
        if r is not None and resp is None:
            resp = r
        if final:
            break
    if resp is None:
        resp = InferenceResponse(
            error=TritonError("An error occurred while performing BLS request."))
    return resp


class ResponseIterator:
    def __init__(self, conn, bls_id, q):
        self._conn = conn
        self._id = bls_id
        self._q = q
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        """Every response, the FINAL one included: like Triton 2.51, a flags-only FINAL
        (no response) is yielded as an InferenceResponse with no outputs."""
        while not self._done:
            final, r = self._conn.take(self._q)
            if final:
                self._done = True
                self._conn.waiters.pop(self._id, None)
                if r is None:
                    r = InferenceResponse()
            if r is not None:
                return r
        raise StopIteration

    next = __next__

    def cancel(self):
        if not self._done:
            self._conn.send(P.frame(P.BLS_CANCEL, self._id, []))


def bls_exec(ctx, conn, request, decoupled=False):
    """InferenceRequest.exec in an instance (ctx: its Context, conn: its Conn): through
    a lane the server offered for calls of this shape (lane.py), else through the
    server."""
    lanes = ctx.lanes
    if not decoupled and lanes.shapes:
        resp = _lane_exec(ctx, lanes, request)
        if resp is not None:
            return resp
    q = queue.SimpleQueue()
    c, bls_id = _send_bls(ctx, conn, request, decoupled,
                          lambda c, i: lambda f, r: q.put((f, r)))
    if decoupled:
        return ResponseIterator(c, bls_id, q)
    try:
        resp = _collect_one(c, q)
    finally:
        c.waiters.pop(bls_id, None)
    offer = c.inbox.offer
    if offer is not None and offer[0] == bls_id and resp._error is None:
        shape = LaneCalls.shape(request)
        if shape is not None:
            lanes.offered(shape, offer[1], offer[2])
    return resp


def _lane_exec(ctx, lanes, request):
    """The response of `request` run through its lane; None when it has none (or it
    is busy, or its process is gone before the call was sent)."""
    lane = lanes.lane(LaneCalls.shape(request))
    if lane is None:
        return None
    if not ctx.bls_allowed:
        lane.lock.release()
        raise TritonModelException(BLS_ONLY)
    try:
        answers = lanes.call(lane, request, _lane_answer)
    except LaneError:
        return InferenceResponse(error=TritonError(
            "Stub process '{0}' is not healthy. Python model instance '{0}' exited while "
            "running this request (a direct BLS call); the instance is being restarted"
            .format(lane.instance)))
    if answers is None:
        return None
    if not answers:
        return InferenceResponse(
            error=TritonError("An error occurred while performing BLS request."))
    return answers[0]


def _lane_answer(kind, body, data):
    """(final, InferenceResponse or None) of an answer frame on a lane: the ExecuteDone
    or Send body the called process made, its tensors viewing `data` (lane.py)."""
    if kind == P.EXECUTE_DONE and FRAMES is not None:
        resp = FRAMES.decode_answer(body, data)
        if resp is not None:  # None: an answer the code below must decode
            return True, resp
    if kind == P.EXECUTE_DONE:
        code = _U32(body, 0)[0]
        p = 8 + _U32(body, 4)[0]
        if code != P.NO_ERROR:
            return True, InferenceResponse(
                error=TritonError(str(body[8:p], "utf-8"), TritonError.INTERNAL))
        n = _U32(body, p)[0]
        if n == 0:
            return False, None  # answered through the response sender: Send frames
        if n != 1:
            raise P.ProtocolError("lane answer with %d responses" % n)
        return True, _lane_response(body, p + 12, data, _U64(body, p + 4)[0])
    if kind == P.SEND:
        flags = _U32(body, 0)[0]
        final = flags & P.FLAG_FINAL != 0
        if not body[4]:
            return final, None
        return final, _lane_response(body, 13, data, _U64(body, 5)[0])
    raise P.ProtocolError("unexpected lane frame kind %d" % kind)


def _lane_response(body, p, data, block):
    """One wire `response` at body[p:], its tensors viewing the answer's `data`."""
    base = np.frombuffer(data, np.uint8) if len(data) else None
    return _response(body, p, len(body), base, block, internal=True)


def bls_async_exec(ctx, conn, request, decoupled=False):
    """InferenceRequest.async_exec in an instance (ctx: its Context, conn: its Conn).
    The awaitable completes once the first frame of the answer came (the iterator of a
    decoupled call then holds it), so the event loop runs other coroutines meanwhile, as
    Triton's, which waits for that first response on an executor thread."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    if decoupled:
        q = queue.SimpleQueue()

        def make_stream_waiter(c, bls_id):
            iterator = ResponseIterator(c, bls_id, q)
            first = [True]

            def got(final, r):
                q.put((final, r))
                if first[0]:
                    first[0] = False
                    loop.call_soon_threadsafe(_resolve, fut, iterator)
            return got

        _send_bls(ctx, conn, request, True, make_stream_waiter)
        return fut
    state = [None]

    def make_waiter(c, bls_id):
        def done(final, r):
            if r is not None and state[0] is None:
                state[0] = r
            if final:
                c.waiters.pop(bls_id, None)
                resp = state[0]
                if resp is None:
                    resp = InferenceResponse(error=TritonError(
                        "An error occurred while performing BLS request."))
                loop.call_soon_threadsafe(_resolve, fut, resp)
        return done

    _send_bls(ctx, conn, request, False, make_waiter)
    return fut


def _resolve(fut, value):
    if not fut.done():
        fut.set_result(value)
