"""An `Execute` frame's body straight into pb_utils.InferenceRequest objects (and a
BlsResponse's tensors into pb_utils.Tensor objects: `decode_tensors`).

The hot path of every batch: one pass over the bytes, no intermediate descriptors, no
per-field bounds checks (unpacking past the end raises struct.error or IndexError, a string
cut short leaves the position past the end, a view outside the arena raises ValueError;
the caller treats all of them as a malformed frame). `_frames.decode_requests` and
`_frames.decode_tensors` do the same in C and raise ValueError; the `py_` functions run
where it is not built.
"""

import struct

import numpy as np

from .arena_io import in_block
from .compiled import FRAMES
from .messages import InferenceRequest
from .protocol import ProtocolError, tensor_tail
from .tensors import BF16, BYTES, WIRE_NP, Tensor

_BATCH_HEAD = struct.Struct("<QI")  # block, n
_REQ_HEAD = struct.Struct("<QIBQ").unpack_from  # rid, flags, corr_kind, corr_u64
_U32 = struct.Struct("<I").unpack_from
_U16 = struct.Struct("<H").unpack_from
_TIMEOUT_NIN = struct.Struct("<QH").unpack_from
# corr_str "", request_id "", parameters_json "{}": what most requests carry
_NO_STRINGS = b"\x00\x00\x00\x00" b"\x00\x00\x00\x00" b"\x02\x00\x00\x00{}"


def decode_execute(conn, body, model_name):
    """The requests of an Execute body, their input tensors viewing arena_in."""
    block, n = _BATCH_HEAD.unpack_from(body, 0)
    owner, base = in_block(conn, block)
    requests, p = decode_requests(
        body, 12, n, base, 0 if base is None else len(base), block, owner, model_name)
    if p != len(body):
        raise ProtocolError("Execute frame of %d bytes, %d decoded" % (len(body), p))
    return requests


def py_decode_requests(body, p, n, base, base_len, block, owner, model_name):
    """The n requests of an Execute body from position p: (requests, position after
    them). `_frames.decode_requests` is the same in C."""
    new_request = InferenceRequest.__new__
    requests = []
    for _ in range(n):
        rid, flags, corr_kind, corr_u64 = _REQ_HEAD(body, p)
        p += 21
        if body.startswith(_NO_STRINGS, p):
            corr_str = request_id = ""
            parameters = "{}"
            p += len(_NO_STRINGS)
        else:
            k = _U32(body, p)[0]
            corr_str = str(body[p + 4:p + 4 + k], "utf-8")
            p += 4 + k
            k = _U32(body, p)[0]
            request_id = str(body[p + 4:p + 4 + k], "utf-8")
            p += 4 + k
            k = _U32(body, p)[0]
            parameters = str(body[p + 4:p + 4 + k], "utf-8") or "{}"
            p += 4 + k
        timeout_us, n_in = _TIMEOUT_NIN(body, p)
        inputs, p = py_decode_tensors(body, p + 10, len(body), n_in, base, base_len, block)
        k = _U16(body, p)[0]
        p += 2
        outputs = []
        for _ in range(k):
            m = _U32(body, p)[0]
            outputs.append(str(body[p + 4:p + 4 + m], "utf-8"))
            p += 4 + m
        if corr_kind > 2:
            raise ProtocolError("bad correlation kind")
        r = new_request(InferenceRequest)
        r._request_id = request_id
        r._corr = corr_str if corr_kind == 2 else corr_u64
        r._inputs = inputs
        r._outputs = outputs
        r._model_name = model_name
        r._model_version = -1
        r._flags = flags
        r._timeout = timeout_us
        r._params = parameters
        r._rid = rid
        r._sender = None
        r._block = owner
        r._release_flags = 1
        r._preferred_memory = None
        r._trace = None
        requests.append(r)
    return requests, p


def py_decode_tensors(body, p, end, n, base, base_len, block):
    """n input tensors from position p of body (not past end), viewing base (arena_in
    from `block` on): (tensors, position after them). `_frames.decode_tensors` is the
    same in C."""
    new_tensor = Tensor.__new__
    ndarray = np.ndarray
    wire_np = WIRE_NP
    inputs = []
    for _ in range(n):
        k = _U32(body, p)[0]
        name = str(body[p + 4:p + 4 + k], "utf-8")
        p += 4 + k
        ndim = body[p + 1]
        vals = tensor_tail(ndim).unpack_from(body, p)
        p += 18 + 8 * ndim
        if p > end:
            raise ValueError("frame cut short")
        code = vals[0]
        dims = list(vals[2:-2])
        nbytes = vals[-1]
        wd = wire_np.get(code)
        if wd is None:
            raise ValueError("bad dtype %d" % code)
        if base is None:
            raise ValueError("tensors without a block")
        o = vals[-2] - block
        if o < 0:  # (numpy would make a view before its buffer)
            raise ValueError("tensor before its block")
        t = new_tensor(Tensor)
        t._name = name
        t._dtype = code
        t._dims = dims
        if code == BYTES:
            if o + nbytes > base_len:
                raise ValueError("tensor outside arena_in")
            t._np = None
            t._raw = base[o:o + nbytes]
            inputs.append(t)
            continue
        count = 1
        for x in dims:
            count *= x
        if count * wd.itemsize != nbytes:
            raise ValueError("tensor size does not match its shape")
        try:
            arr = ndarray(dims, wd, base, o)
        except TypeError as e:  # past the end of the arena
            raise ValueError(str(e))  # (a negative dim or offset: ValueError)
        if code == BF16:
            t._np = None
            t._raw = arr
        else:
            t._np = arr
            t._raw = None
        inputs.append(t)
    return inputs, p


decode_requests = py_decode_requests if FRAMES is None else FRAMES.decode_requests
decode_tensors = py_decode_tensors if FRAMES is None else FRAMES.decode_tensors
