"""Frame encoding/decoding for the instance socket (docs/design/python-wire.md).

Little-endian, no padding. A frame is ``u32 len, u32 kind, u64 tag, body`` where ``len``
counts the bytes after the length field.
"""

import struct

# server -> stub
INIT = 1
EXECUTE = 2
FINALIZE = 3
BLS_RESPONSE = 4
REPLY = 5
RELEASE_IN = 6
AUTO_COMPLETE = 7
METRIC_REPLY = 8
MODEL_CONTROL_REPLY = 9
LANE_OFFER = 10
# stub -> server
INIT_DONE = 32
EXECUTE_DONE = 33
SEND = 34
BLS = 35
BLS_CANCEL = 36
IS_CANCELLED = 37
LOG = 38
RELEASE_OUT = 39
FINALIZE_DONE = 40
AUTO_COMPLETE_DONE = 41
RESCHEDULE = 42
METRIC_FAMILY_NEW = 43
METRIC_NEW = 44
METRIC_UPDATE = 45
METRIC_VALUE = 46
METRIC_DELETE = 47
LOAD_MODEL = 48
UNLOAD_MODEL = 49
MODEL_READY = 50
LANE_EXECUTED = 51

NO_ERROR = 0xFFFFFFFF
NO_BLOCK = 0xFFFFFFFFFFFFFFFF
FLAG_FINAL = 1
FLAG_FAILED = 2  # Send: the request's execution failed (not an answer of the model's)
MALFORMED_EXIT = 70
LANE_RID = 1 << 63  # the rids of requests that came in through the lane (lane.py)

LEN = struct.Struct("<I")
HDR = struct.Struct("<IIQ")  # len, kind, tag
KIND_TAG = struct.Struct("<IQ")
U8 = struct.Struct("<B")
U16 = struct.Struct("<H")
U32 = struct.Struct("<I")
U64 = struct.Struct("<Q")
I64 = struct.Struct("<q")
F64 = struct.Struct("<d")
BB = struct.Struct("<BB")
QQ = struct.Struct("<QQ")
REQ_HEAD = struct.Struct("<QIBQ")  # rid, flags, corr_kind, corr_u64
BOOL2 = struct.Struct("<BB")
U32_U8 = struct.Struct("<IB")  # flags, has_response
BLS_HEAD = struct.Struct("<IBQ")  # flags, corr_kind, corr_u64
LOG_HEAD = struct.Struct("<B")

_dims_structs = {}
_tail_structs = {}


def tensor_tail(ndim):
    """The struct of a tensor descriptor after its name: dtype, ndim, dims, offset,
    nbytes."""
    s = _tail_structs.get(ndim)
    if s is None:
        s = _tail_structs[ndim] = struct.Struct("<BB%dqQQ" % ndim)
    return s


def _dims(ndim):
    s = _dims_structs.get(ndim)
    if s is None:
        s = _dims_structs[ndim] = struct.Struct("<%dq" % ndim)
    return s


class ProtocolError(Exception):
    pass


class TensorDesc:
    __slots__ = ("name", "dtype", "dims", "offset", "nbytes")

    def __init__(self, name, dtype, dims, offset, nbytes):
        self.name = name
        self.dtype = dtype
        self.dims = dims
        self.offset = offset
        self.nbytes = nbytes

    def __repr__(self):
        return "TensorDesc(%r, %d, %r, %d, %d)" % (
            self.name, self.dtype, self.dims, self.offset, self.nbytes)

    def __eq__(self, other):
        return (isinstance(other, TensorDesc) and self.name == other.name
                and self.dtype == other.dtype and list(self.dims) == list(other.dims)
                and self.offset == other.offset and self.nbytes == other.nbytes)


class ResponseDesc:
    __slots__ = ("err_code", "err_msg", "parameters", "tensors")


class Reader:
    """Sequential decoder over a bytes-like object. Raises ProtocolError on truncation."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf, pos=0, end=None):
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def _take(self, st):
        p = self.pos
        q = p + st.size
        if q > self.end:
            raise ProtocolError("truncated frame")
        self.pos = q
        return st.unpack_from(self.buf, p)

    def u8(self):
        return self._take(U8)[0]

    def bool(self):
        v = self._take(U8)[0]
        if v > 1:
            raise ProtocolError("bad bool")
        return v == 1

    def u16(self):
        return self._take(U16)[0]

    def u32(self):
        return self._take(U32)[0]

    def u64(self):
        return self._take(U64)[0]

    def i64(self):
        return self._take(I64)[0]

    def f64(self):
        return self._take(F64)[0]

    def blob(self):
        n = self._take(U32)[0]
        p = self.pos
        q = p + n
        if q > self.end:
            raise ProtocolError("truncated frame")
        self.pos = q
        return bytes(self.buf[p:q])

    def str(self):
        n = self._take(U32)[0]
        p = self.pos
        q = p + n
        if q > self.end:
            raise ProtocolError("truncated frame")
        self.pos = q
        try:
            return str(self.buf[p:q], "utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("invalid utf-8")

    def tensor(self):
        name = self.str()
        dtype, ndim = self._take(BB)
        dims = list(self._take(_dims(ndim))) if ndim else []
        offset, nbytes = self._take(QQ)
        return TensorDesc(name, dtype, dims, offset, nbytes)

    def error(self):
        code = self._take(U32)[0]
        msg = self.str()
        return (None if code == NO_ERROR else code), msg

    def response(self):
        r = ResponseDesc()
        r.err_code, r.err_msg = self.error()
        r.parameters = self.str()
        n = self.u16()
        r.tensors = [self.tensor() for _ in range(n)]
        return r

    def done(self):
        if self.pos != self.end:
            raise ProtocolError("trailing bytes in frame")


# ---------------------------------------------------------------- encoding helpers
# Encoders append bytes objects to a list `out`; frame() joins them with the header.

def frame(kind, tag, parts):
    body = b"".join(parts)
    return HDR.pack(len(body) + 12, kind, tag) + body


def p_str(out, s):
    b = s.encode("utf-8") if s.__class__ is str else bytes(s)
    out.append(U32.pack(len(b)))
    out.append(b)


_names = {}  # tensor name -> its encoded `str` (u32 length + UTF-8)


def p_tensor(out, name, dtype, dims, offset, nbytes):
    b = _names.get(name)
    if b is None:
        b = name.encode("utf-8")
        b = U32.pack(len(b)) + b
        if len(_names) < 4096:
            _names[name] = b
    nd = len(dims)
    out.append(b)
    out.append(tensor_tail(nd).pack(dtype, nd, *dims, offset, nbytes))


def p_error(out, code, msg):
    if code is None:
        out.append(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    else:
        out.append(U32.pack(code))
        p_str(out, msg)


def p_response(out, code, msg, params, tensors):
    """tensors: iterable of (name, dtype, dims, offset, nbytes)."""
    p_error(out, code, msg)
    p_str(out, params)
    out.append(U16.pack(len(tensors)))
    for t in tensors:
        p_tensor(out, *t)


def release_frame(offsets):
    n = len(offsets)
    body = U32.pack(n) + struct.pack("<%dQ" % n, *offsets)
    return HDR.pack(len(body) + 12, RELEASE_OUT, 0) + body


def reschedule_frame(rids):
    n = len(rids)
    body = U32.pack(n) + struct.pack("<%dQ" % n, *rids)
    return HDR.pack(len(body) + 12, RESCHEDULE, 0) + body


# ---------------------------------------------------------------- server-side helpers
# Used by tests (and handy for debugging): encoders of server -> stub frames and a
# decoder of stub -> server frames. `enc_request` also writes a lane's calls (lane_calls.py),
# which are Execute bodies as the server writes them.

def enc_init(args, model_file, decoupled, idle_spin_us=0, lane=""):
    out = [U16.pack(len(args))]
    for k, v in args.items():
        p_str(out, k)
        p_str(out, v)
    p_str(out, model_file)
    out.append(U8.pack(1 if decoupled else 0))
    out.append(U32.pack(idle_spin_us))
    p_str(out, lane)
    return frame(INIT, 0, out)


def enc_lane_offer(bls_id, path, instance):
    out = []
    p_str(out, path)
    p_str(out, instance)
    return frame(LANE_OFFER, bls_id, out)


def enc_request(out, rid, inputs, outputs=(), flags=0, corr=None, request_id="",
                parameters="{}", timeout_us=0):
    if corr is None:
        ck, cu, cs = 0, 0, ""
    elif isinstance(corr, int):
        ck, cu, cs = 1, corr, ""
    else:
        ck, cu, cs = 2, 0, corr
    out.append(REQ_HEAD.pack(rid, flags, ck, cu))
    p_str(out, cs)
    p_str(out, request_id)
    p_str(out, parameters)
    out.append(U64.pack(timeout_us))
    out.append(U16.pack(len(inputs)))
    for t in inputs:
        p_tensor(out, *t)
    out.append(U16.pack(len(outputs)))
    for o in outputs:
        p_str(out, o)


def enc_execute(batch_id, block, requests):
    """requests: list of dicts of enc_request keyword args."""
    out = [U64.pack(block), U32.pack(len(requests))]
    for r in requests:
        enc_request(out, **r)
    return frame(EXECUTE, batch_id, out)


def enc_bls_response(bls_id, final, response=None, block=NO_BLOCK):
    """response: None or (code, msg, params, tensors)."""
    out = [BOOL2.pack(1 if final else 0, 0 if response is None else 1)]
    if response is not None:
        out.append(U64.pack(block))
        p_response(out, *response)
    return frame(BLS_RESPONSE, bls_id, out)


def enc_release(offsets):
    n = len(offsets)
    return frame(RELEASE_IN, 0, [U32.pack(n), struct.pack("<%dQ" % n, *offsets)])


def enc_auto_complete(model_file, config_json):
    out = []
    p_str(out, model_file)
    p_str(out, config_json)
    return frame(AUTO_COMPLETE, 0, out)


def enc_metric_reply(call_id, value=0.0, error=None):
    """error: None or (code, message)."""
    out = []
    code, msg = error if error is not None else (NO_ERROR, "")
    p_error(out, code, msg)
    out.append(F64.pack(value))
    return frame(METRIC_REPLY, call_id, out)


def enc_model_control_reply(call_id, ready=False, error=None):
    """error: None or (code, message)."""
    out = []
    code, msg = error if error is not None else (NO_ERROR, "")
    p_error(out, code, msg)
    out.append(U8.pack(1 if ready else 0))
    return frame(MODEL_CONTROL_REPLY, call_id, out)


def decode_stub_frame(kind, tag, body):
    """Decode a stub -> server frame body into a dict (for tests and tools)."""
    r = Reader(body)
    d = {"kind": kind, "tag": tag}
    if kind in (INIT_DONE, FINALIZE_DONE):
        d["error"] = r.error()
    elif kind == EXECUTE_DONE:
        d["error"] = r.error()
        n = r.u32()
        d["block"] = r.u64()
        d["responses"] = [r.response() for _ in range(n)]
    elif kind == SEND:
        d["flags"] = r.u32()
        d["block"] = NO_BLOCK
        d["response"] = None
        if r.bool():
            d["block"] = r.u64()
            d["response"] = r.response()
    elif kind == BLS:
        d["decoupled"] = r.bool()
        d["model_name"] = r.str()
        d["model_version"] = r.i64()
        d["block"] = r.u64()
        d["flags"], d["corr_kind"], d["corr_u64"] = r._take(BLS_HEAD)
        d["corr_str"] = r.str()
        d["request_id"] = r.str()
        d["parameters"] = r.str()
        d["timeout_us"] = r.u64()
        d["inputs"] = [r.tensor() for _ in range(r.u16())]
        d["outputs"] = [r.str() for _ in range(r.u16())]
        d["parent_rid"] = r.u64()
    elif kind == BLS_CANCEL:
        pass
    elif kind == IS_CANCELLED:
        d["rid"] = r.u64()
    elif kind == LOG:
        d["level"] = r.u8()
        d["file"] = r.str()
        d["line"] = r.u32()
        d["message"] = r.str()
    elif kind == RELEASE_OUT:
        n = r.u32()
        d["offsets"] = [r.u64() for _ in range(n)]
    elif kind == RESCHEDULE:
        n = r.u32()
        d["rids"] = [r.u64() for _ in range(n)]
    elif kind == LANE_EXECUTED:
        d["executions"] = [(r.u64(), r.bool()) for _ in range(r.u32())]
    elif kind == AUTO_COMPLETE_DONE:
        d["error"] = r.error()
        d["config"] = r.str()
    elif kind == METRIC_FAMILY_NEW:
        d["name"] = r.str()
        d["description"] = r.str()
        d["metric_kind"] = r.u8()
    elif kind == METRIC_NEW:
        d["family"] = r.str()
        d["labels"] = r.str()
        d["buckets"] = [r.f64() for _ in range(r.u32())] if r.bool() else None
    elif kind == METRIC_UPDATE:
        d["op"] = r.u8()
        d["value"] = r.f64()
    elif kind == METRIC_VALUE:
        d["metric"] = r.u64()
    elif kind == METRIC_DELETE:
        pass
    elif kind == LOAD_MODEL:
        d["model_name"] = r.str()
        d["config"] = r.str()
        d["files"] = {}
        for _ in range(r.u32()):
            name = r.str()
            d["files"][name] = r.blob()
    elif kind == UNLOAD_MODEL:
        d["model_name"] = r.str()
        d["unload_dependents"] = r.bool()
    elif kind == MODEL_READY:
        d["model_name"] = r.str()
        d["model_version"] = r.str()
    else:
        raise ProtocolError("unknown stub frame kind %d" % kind)
    r.done()
    return d
