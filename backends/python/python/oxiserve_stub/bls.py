"""BLS: what InferenceRequest.exec / async_exec do (a BLS frame out, BlsResponse frames
back as InferenceResponses) and pb_utils.ResponseIterator.

Sits between the two sides: reads pb_utils' types (messages.py) and speaks the transport
(`conn`: conn.py), which it is given explicitly: `decode_bls_response` is handed to the
Conn by the entry point, the exec functions are bound to the instance's Context and
Conn once (context.py).
"""

import asyncio
import queue

from . import protocol as P
from .arena_io import make_inputs, write_tensors
from .errors import TritonError, TritonModelException
from .messages import BLS_ONLY, InferenceResponse


def decode_bls_response(conn, body_reader):
    """Reader thread: decode a BlsResponse body -> (final, InferenceResponse or None)."""
    r = body_reader
    final = r.bool()
    has = r.bool()
    if not has:
        r.done()
        return final, None
    block = r.u64()
    d = r.response()
    r.done()
    owner, (tensors,) = make_inputs(conn, block, [d.tensors])
    resp = InferenceResponse.__new__(InferenceResponse)
    resp._outputs = tensors
    resp._error = None if d.err_code is None else TritonError(d.err_msg, d.err_code)
    resp._params = d.parameters or "{}"
    resp._block = owner
    return final, resp


def _send_bls(ctx, c, request, decoupled, make_waiter):
    if not ctx.bls_allowed:
        raise TritonModelException(BLS_ONLY)
    corr = request._corr
    if isinstance(corr, str):
        ck, cu, cs = 2, 0, corr
    else:
        ck, cu, cs = (1 if corr else 0), corr, ""
    try:
        block, (tensors,) = write_tensors(c, [request._inputs])
    except Exception as e:
        raise TritonModelException(str(e))
    out = [b"\x01" if decoupled else b"\x00"]
    P.p_str(out, request._model_name)
    out.append(P.I64.pack(request._model_version))
    out.append(P.U64.pack(block))
    out.append(P.BLS_HEAD.pack(request._flags, ck, cu))
    P.p_str(out, cs)
    P.p_str(out, request._request_id)
    P.p_str(out, request._params)
    out.append(P.U64.pack(request._timeout))
    out.append(P.U16.pack(len(tensors)))
    for t in tensors:
        P.p_tensor(out, *t)
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
    """InferenceRequest.exec in an instance (ctx: its Context, conn: its Conn)."""
    q = queue.SimpleQueue()
    c, bls_id = _send_bls(ctx, conn, request, decoupled,
                          lambda c, i: lambda f, r: q.put((f, r)))
    if decoupled:
        return ResponseIterator(c, bls_id, q)
    try:
        return _collect_one(c, q)
    finally:
        c.waiters.pop(bls_id, None)


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
