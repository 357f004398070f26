"""The compiled hot path (_frames.c) against its Python equivalent: the same Execute
frames give the same requests and the same BlsResponse frames the same responses (or both
fail), the same responses (and BLS request inputs) give the same ExecuteDone bytes (and
descriptors) and arena_out contents, the same BLS requests the same lane call frames, and
a lane answer encoded in C the same responses as one forwarded from arena_out (or the C
side hands over to Python)."""

import ctypes
import importlib.machinery
import importlib.util
import itertools
import mmap
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import types

import socket
import threading
import time

import numpy as np
import pytest

from oxiserve_stub import bls, compiled, execute_frame, lane_calls, lane_server, response_frames
from oxiserve_stub import protocol as P
from oxiserve_stub.arena import Allocator
from oxiserve_stub.errors import TritonError
from oxiserve_stub.messages import InferenceRequest, InferenceResponse
from oxiserve_stub.tensors import BF16, BYTES, WIRE_NP, Tensor, serialize_bytes

SOURCE = os.path.join(os.path.dirname(compiled.__file__), "_frames.c")
ARENA = 1 << 16


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    """_frames.c built here with every warning an error, as build.rs builds it."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if cc is None or not os.path.isfile(os.path.join(include, "Python.h")):
        pytest.skip("no C compiler or Python headers")
    built = str(tmp_path_factory.mktemp("frames") / "_frames.abi3.so")
    subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-fvisibility=hidden", "-I" + include, SOURCE, "-o", built], check=True)
    loader = importlib.machinery.ExtensionFileLoader("oxiserve_stub._frames", built)
    spec = importlib.util.spec_from_file_location("oxiserve_stub._frames", built,
                                                  loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return compiled.bind(module)


def _address(mm):
    return ctypes.addressof((ctypes.c_char * 1).from_buffer(mm))


# ------------------------------------------------------------------ Execute frames

REQUEST_SLOTS = [s for s in InferenceRequest.__slots__ if s not in ("_inputs", "__weakref__")]


class Arena:
    """arena_in as the stub sees it, with tensors written by the test."""

    def __init__(self):
        self.mm = mmap.mmap(-1, ARENA)
        self.released = []
        self.conn = types.SimpleNamespace(in_addr=_address(self.mm), in_size=ARENA,
                                          queue_release=self.released.append)
        self.next = 64

    def tensor(self, name, arr, code=None):
        """The wire tuple of arr written at the next free offset."""
        code = code if code is not None else (
            BYTES if arr.dtype == np.object_ else
            next(c for c, d in WIRE_NP.items() if d == arr.dtype and c not in (BYTES, BF16)))
        data = serialize_bytes(arr) if code == BYTES else arr.tobytes()
        off = self.next
        self.mm[off:off + len(data)] = data
        self.next += (len(data) + 63) & ~63 or 64
        return (name, code, list(arr.shape), off, len(data))


def _decode(impl, conn, body, monkeypatch):
    monkeypatch.setattr(execute_frame, "decode_requests", impl)
    return execute_frame.decode_execute(conn, body, "model")


def _described_tensors(tensors):
    """Everything a model can see of decoded tensors, as plain values."""
    out = []
    for t in tensors:
        raw = None if t._raw is None else (t._raw.dtype.str, t._raw.tobytes())
        arr = None if t._np is None else (t._np.dtype.str, t._np.shape, t._np.tobytes())
        out.append((t._name, t._dtype, t._dims, raw, arr))
    return out


def _described(requests):
    """Everything a model can see of decoded requests, as plain values."""
    out = []
    for r in requests:
        fields = [getattr(r, s) for s in REQUEST_SLOTS if s != "_block"]
        out.append((fields, _described_tensors(r._inputs), r._block is not None))
    return out


def _varied_frame(arena):
    t = arena.tensor
    requests = [
        {"rid": 1, "inputs": [t("INPUT0", np.arange(4, dtype=np.float32).reshape(1, 4)),
                              t("INPUT1", np.ones((1, 4), np.float32))]},
        {"rid": 2, "flags": 3, "corr": 2**64 - 1, "request_id": "req-é",
         "parameters": '{"k": 1}', "timeout_us": 77, "outputs": ["OUT", "ÜBER"],
         "inputs": [t("s", np.array([b"a", b"", "é".encode()], dtype=object)),
                    t("bf", np.array([1, 2], np.uint16), code=BF16),
                    t("scalar", np.array(5, np.int64))]},
        {"rid": 3, "corr": "session-7", "parameters": "",
         "inputs": [t("empty", np.zeros((0, 3), np.int8))]},
        {"rid": 4, "inputs": [t("x%d" % code, np.ones((2, 1), d))
                              for code, d in WIRE_NP.items() if code not in (BYTES, BF16)]},
        {"rid": 5, "inputs": []},
    ]
    return P.enc_execute(7, 64, requests)[16:]


def test_decode_agrees_with_python(frames, monkeypatch):
    arena = Arena()
    body = _varied_frame(arena)
    want = _decode(execute_frame.py_decode_requests, arena.conn, body, monkeypatch)
    got = _decode(frames.decode_requests, arena.conn, body, monkeypatch)
    assert _described(got) == _described(want)
    assert [r.correlation_id() for r in got] == [0, 2**64 - 1, "session-7", 0, 0]
    assert got[2].parameters() == "{}" and got[1].requested_output_names() == ["OUT", "ÜBER"]
    assert got[1].inputs()[0].as_numpy().tolist() == [b"a", b"", "é".encode()]
    assert got[0].inputs()[0]._np.base.base is got[0]._block  # a view of the arena block
    del got, want
    assert arena.released == [64, 64]  # each decoding's block went back once


def test_decode_of_no_block(frames, monkeypatch):
    body = P.enc_execute(1, P.NO_BLOCK, [{"rid": 1, "inputs": [], "outputs": ["y"]}])[16:]
    for impl in (execute_frame.py_decode_requests, frames.decode_requests):
        (r,) = _decode(impl, Arena().conn, body, monkeypatch)
        assert (r._rid, r._inputs, r._outputs, r._block) == (1, [], ["y"], None)


def _bad_frames(arena):
    t = arena.tensor("x", np.ones(4, np.float32))
    name, code, dims, off, n = t

    def one(**r):
        return P.enc_execute(1, 64, [dict({"rid": 1}, **r)])[16:]

    return {
        "bad dtype": one(inputs=[(name, 20, dims, off, n)]),
        "size and shape differ": one(inputs=[(name, code, [5], off, n)]),
        "negative dimension": one(inputs=[(name, code, [-1, -4], off, n)]),
        "dimensions past 64 bits": one(inputs=[(name, code, [2**62, 2**62, 1], off, n)]),
        "too big for numpy, but empty": one(inputs=[(name, code, [2**40, 2**40, 0], off, 0)]),
        "past the arena": one(inputs=[(name, code, [4], ARENA - 8, n)]),
        "before the block": one(inputs=[(name, code, [4], 0, n)]),
        "bytes past the arena": one(inputs=[(name, BYTES, [1], ARENA - 8, 16)]),
        "no block": P.enc_execute(1, P.NO_BLOCK, [{"rid": 1, "inputs": [t]}])[16:],
        "bad correlation kind": one(inputs=[t]).replace(
            struct.pack("<QIB", 1, 0, 0), struct.pack("<QIB", 1, 0, 3), 1),
        "bad UTF-8": one(inputs=[t], request_id="ab").replace(b"ab", b"\xff\xfe", 1),
        "trailing bytes": one(inputs=[t]) + b"\0",
    }


# What the stub treats as a malformed frame (Instance.on_execute and Instance.run).
MALFORMED = (P.ProtocolError, ValueError, IndexError, struct.error)


@pytest.mark.parametrize("case", list(_bad_frames(Arena())))
def test_decode_rejects_what_python_rejects(frames, monkeypatch, case):
    arena = Arena()
    body = _bad_frames(arena)[case]
    for impl in (execute_frame.py_decode_requests, frames.decode_requests):
        with pytest.raises(MALFORMED):
            _decode(impl, arena.conn, body, monkeypatch)


def test_decode_of_every_cut_fails_cleanly(frames, monkeypatch):
    arena = Arena()
    body = _varied_frame(arena)
    for cut in range(1, len(body)):
        for impl in (execute_frame.py_decode_requests, frames.decode_requests):
            with pytest.raises(MALFORMED):
                _decode(impl, arena.conn, body[:cut], monkeypatch)
    # Every decoding that got past the batch head (12 bytes) let go of its block: no
    # reference leaked on an error path.
    assert arena.released == [64] * 2 * (len(body) - 12)


# ------------------------------------------------------------------ BlsResponse frames

# Bytes of the next frame after a BlsResponse in the stub's read buffer: the decoding
# must stop at the frame's end.
NEXT_FRAME = P.enc_release([1, 2, 3])


def _bls(impl, arena, body, monkeypatch):
    """decode_bls_response on body inside a read buffer, tensors decoded by impl."""
    monkeypatch.setattr(bls, "decode_tensors", impl)
    buf = bytearray(b"\x07" * 5 + body + NEXT_FRAME)
    return bls.decode_bls_response(arena.conn, buf, 5, 5 + len(body))


def _bls_response(arena):
    t = arena.tensor
    outputs = [t("OUTPUT0", np.arange(4, dtype=np.float32).reshape(1, 4)),
               t("OUTPUT1", np.array([b"a", b"", "é".encode()], dtype=object)),
               t("bf", np.array([1, 2], np.uint16), code=BF16)]
    return P.enc_bls_response(9, True, (None, "", '{"k": 1}', outputs), 64)[16:]


def _described_response(resp):
    return (_described_tensors(resp._outputs), resp._params, resp._error,
            resp._block is not None)


def test_bls_response_agrees_with_python(frames, monkeypatch):
    arena = Arena()
    body = _bls_response(arena)
    final, want = _bls(execute_frame.py_decode_tensors, arena, body, monkeypatch)
    assert final
    _, got = _bls(frames.decode_tensors, arena, body, monkeypatch)
    assert _described_response(got) == _described_response(want)
    assert got.output_tensors()[0].as_numpy().tolist() == [[0.0, 1.0, 2.0, 3.0]]
    assert got.output_tensors()[1].as_numpy().tolist() == [b"a", b"", "é".encode()]
    assert got.parameters() == '{"k": 1}' and not got.has_error()
    del got, want
    assert arena.released == [64, 64]  # each decoding's block went back once


def test_bls_response_without_tensors_or_response(frames, monkeypatch):
    arena = Arena()
    failed = P.enc_bls_response(9, False, (2, "model 'm' not found", "", []))[16:]
    for impl in (execute_frame.py_decode_tensors, frames.decode_tensors):
        final, resp = _bls(impl, arena, failed, monkeypatch)
        assert not final and resp._outputs == [] and resp._block is None
        assert resp.error().message() == "model 'm' not found" and resp.parameters() == "{}"
        assert _bls(impl, arena, P.enc_bls_response(9, True)[16:], monkeypatch) == (True, None)


def _bad_bls_responses(arena):
    t = arena.tensor("x", np.ones(4, np.float32))
    name, code, dims, off, n = t

    def one(*tensors, block=64, final=True):
        return P.enc_bls_response(9, final, (None, "", "", list(tensors)), block)[16:]

    return {
        "bad dtype": one((name, 20, dims, off, n)),
        "size and shape differ": one((name, code, [5], off, n)),
        "past the arena": one((name, code, [4], ARENA - 8, n)),
        "before the block": one((name, code, [4], 0, n)),
        "no block": one(t, block=P.NO_BLOCK),
        "block outside the arena": one(block=ARENA),
        "bad final flag": b"\x02" + one(t)[1:],
        "a response flagged absent": b"\x01\x00" + one(t)[2:],
        "bad UTF-8": one(t).replace(b"\x01\x00\x00\x00x", b"\x01\x00\x00\x00\xff", 1),
        "trailing bytes": one(t) + b"\0",
        "no response, trailing bytes": P.enc_bls_response(9, True)[16:] + b"\0",
    }


@pytest.mark.parametrize("case", list(_bad_bls_responses(Arena())))
def test_bls_response_rejects_what_python_rejects(frames, monkeypatch, case):
    arena = Arena()
    body = _bad_bls_responses(arena)[case]
    for impl in (execute_frame.py_decode_tensors, frames.decode_tensors):
        with pytest.raises(MALFORMED):
            _bls(impl, arena, body, monkeypatch)


def test_bls_response_of_every_cut_fails_cleanly(frames, monkeypatch):
    arena = Arena()
    body = _bls_response(arena)
    for cut in range(1, len(body)):
        for impl in (execute_frame.py_decode_tensors, frames.decode_tensors):
            with pytest.raises(MALFORMED):
                _bls(impl, arena, body[:cut], monkeypatch)


# ------------------------------------------------------------------ ExecuteDone encoding

class OutConn:
    """What encode_responses uses of the connection: arena_out and its allocator."""

    def __init__(self, fail=False):
        self.out_mm = mmap.mmap(-1, ARENA)
        self.out_mv = memoryview(self.out_mm)
        self.out_size = ARENA
        self.out_addr = _address(self.out_mm)
        self.alloc = Allocator(ARENA)
        self.alloc.alloc(128)  # blocks do not start at 0
        self.fail = fail

    def alloc_block(self, size):
        if self.fail:
            raise RuntimeError("no room")
        return self.alloc.alloc(size)


def _encode(monkeypatch, impl, pairs, fail=False):
    conn = OutConn(fail)
    monkeypatch.setattr(response_frames, "FRAMES", impl)
    out = []
    response_frames.encode_responses(conn, pairs, out)
    return b"".join(out), bytes(conn.out_mm)


def _tensor_sets():
    f32 = np.arange(8, dtype=np.float32).reshape(2, 4)
    inputs = Arena()
    name, code, dims, off, n = inputs.tensor("in", np.array([b"x"], dtype=object))
    passthrough = Tensor._wire("P", BYTES, dims, np.frombuffer(inputs.mm, np.uint8, n, off))
    return {
        "plain": [[Tensor("OUTPUT0", f32), Tensor("OUTPUT1", -f32)]] * 3,
        "every dtype": [[Tensor("t%d" % c, np.ones((1, 3), d)) for c, d in WIRE_NP.items()
                         if c not in (BYTES, BF16)]],
        "scalar and empty": [[Tensor("s", np.array(2.5)), Tensor("e", np.zeros((0, 2)))]],
        "non-contiguous input": [[Tensor("T", np.arange(12).reshape(3, 4)[:, ::2])]],
        "no outputs": [[], []],
        "bytes": [[Tensor("B", np.array([b"ab", "é"], dtype=object)), Tensor("F", f32)]],
        "passed-through input": [[passthrough]],
        "big": [[Tensor("big", np.arange(10000, dtype=np.int32))]],
    }


@pytest.mark.parametrize("case", list(_tensor_sets()))
@pytest.mark.parametrize("requested", [[], ["OUTPUT1", "t9", "B", "nothing"]])
def test_encode_agrees_with_python(frames, monkeypatch, case, requested):
    pairs = [(InferenceResponse(ts), requested) for ts in _tensor_sets()[case]]
    assert _encode(monkeypatch, frames, pairs) == _encode(monkeypatch, None, pairs)


def test_encode_hands_over_what_it_does_not_encode(frames, monkeypatch):
    f32 = np.ones(4, np.float32)
    for pairs in (
        [(InferenceResponse([Tensor("A", f32)], error=TritonError("bad")), [])],
        [(InferenceResponse([Tensor("A", f32)], parameters={"p": 1}), [])],
        [(InferenceResponse([Tensor("B", np.array([b"b"], dtype=object))]), [])],
    ):
        conn = OutConn()
        assert frames.encode_responses(pairs, conn.alloc_block, conn.out_addr,
                                       conn.out_size) is None
        assert _encode(monkeypatch, frames, pairs) == _encode(monkeypatch, None, pairs)


def test_encode_when_the_arena_is_full(frames, monkeypatch):
    """alloc raising: C hands over and Python answers every response with an error."""
    pairs = [(InferenceResponse([Tensor("A", np.ones(4, np.float32))]), [])] * 2
    conn = OutConn(fail=True)
    assert frames.encode_responses(pairs, conn.alloc_block, conn.out_addr,
                                   conn.out_size) is None
    got = _encode(monkeypatch, frames, pairs, fail=True)
    assert got == _encode(monkeypatch, None, pairs, fail=True)
    r = P.Reader(got[0])
    assert r.u64() == P.NO_BLOCK
    for _ in pairs:
        response = r.response()
        assert response.err_code == TritonError.INTERNAL and "no room" in response.err_msg
        assert not response.tensors
    r.done()


def _encode_bls_inputs(monkeypatch, impl, inputs, fail=False):
    conn = OutConn(fail)
    monkeypatch.setattr(bls, "FRAMES", impl)
    return bls._encode_inputs(conn, inputs), bytes(conn.out_mm)


@pytest.mark.parametrize("case", list(_tensor_sets()))
def test_bls_inputs_agree_with_python(frames, monkeypatch, case):
    """A BLS request's inputs: the same block, descriptors and arena_out bytes, whether C
    encodes them or (BYTES, BF16, non-arrays) hands them to Python."""
    for inputs in _tensor_sets()[case]:
        got = _encode_bls_inputs(monkeypatch, frames, inputs)
        assert got == _encode_bls_inputs(monkeypatch, None, inputs)
        (block, described), _ = got
        assert (block == P.NO_BLOCK) == (not inputs)
        assert struct.unpack_from("<H", described)[0] == len(inputs)


def test_bls_inputs_when_the_arena_is_full(frames, monkeypatch):
    inputs = [Tensor("A", np.ones(4, np.float32))]
    conn = OutConn(fail=True)
    assert frames.encode_tensors(inputs, conn.alloc_block, conn.out_addr,
                                 conn.out_size) is None
    for impl in (frames, None):
        with pytest.raises(RuntimeError, match="no room"):
            _encode_bls_inputs(monkeypatch, impl, inputs, fail=True)


# ------------------------------------------------------------------ lane frames

def _lane_call(monkeypatch, impl, request):
    monkeypatch.setattr(lane_calls, "FRAMES", impl)
    return lane_calls._encode_call(request)


def _call_of(inputs):
    return InferenceRequest(model_name="m", inputs=inputs, request_id="id-é",
                            requested_output_names=["OUTPUT1", "Ü"])


@pytest.mark.parametrize("case", list(_tensor_sets()))
def test_lane_call_agrees_with_python(frames, monkeypatch, case):
    """The same frame, whether C encodes the call or hands it to Python, and the called
    side decodes it to the inputs sent."""
    for inputs in _tensor_sets()[case]:
        request = _call_of(inputs)
        got = _lane_call(monkeypatch, frames, request)
        assert got == _lane_call(monkeypatch, None, request)
        plain = all(t._np is not None and t._np.dtype != np.object_
                    and t._np.flags.c_contiguous for t in inputs)
        assert (frames.encode_call(request, P.EXECUTE) is not None) == plain
        ln, kind, tag = P.HDR.unpack_from(got)
        assert (ln, kind, tag) == (len(got) - 4, P.EXECUTE, 0)
        n = struct.unpack_from("<I", got, 16)[0]
        data = np.frombuffer(got, np.uint8)[20 + n:]
        (decoded,), end = execute_frame.py_decode_requests(
            got[20:20 + n], 12, 1, data, len(data), 0, None, "m")
        assert end == n
        assert (decoded._request_id, decoded._outputs) == ("id-é", ["OUTPUT1", "Ü"])
        sent = [[v.encode() if isinstance(v, str) else v for v in t.as_numpy().flat]
                for t in inputs]  # BYTES elements arrive as bytes
        assert [(t.name(), t.as_numpy().shape, list(t.as_numpy().flat))
                for t in decoded.inputs()] == [
            (t.name(), t.as_numpy().shape, values) for t, values in zip(inputs, sent)]


def _lane_peer():
    """A LaneServer without a listener, answering call rid 7 to one end of a socket pair
    (returned), its outputs written to arena_out as to the server."""
    server = lane_server.LaneServer.__new__(lane_server.LaneServer)
    server.conn = OutConn()
    server.conn.out_mv = memoryview(server.conn.out_mm)
    mine, theirs = socket.socketpair()
    server.calls = {7: (lane_server._Peer(mine), 5)}
    return server, theirs


def _answered(server, theirs, frame, frames, monkeypatch):
    """The responses the caller decodes from the answer `frame` forwarded by `server`,
    the same whether C decodes it or Python."""
    assert server.answer(7, frame) is False
    lane = lane_calls._Lane(theirs, "path", "instance")
    kind, body, data = lane_calls.LaneCalls(lambda: 0.0)._read(lane)
    assert not server.calls
    decoded = []
    for impl in (frames, None):
        monkeypatch.setattr(bls, "FRAMES", impl)
        final, resp = bls._lane_answer(kind, body, data)
        assert final and (resp._error, resp._params, resp._block) == (None, "{}", None)
        decoded.append([(t.name(), t._dtype, t._dims, t.as_numpy().dtype.str,
                         t.as_numpy().tolist()) for t in resp.output_tensors()])
    assert decoded[0] == decoded[1]
    return decoded[0]


@pytest.mark.parametrize("case", list(_tensor_sets()))
def test_lane_answer_agrees_with_the_arena_path(frames, monkeypatch, case):
    """A call's responses give the caller the same outputs whether C frames them for the
    lane or they go through arena_out as an ExecuteDone frame (the Python path)."""
    monkeypatch.setattr(lane_server, "FRAMES", frames)
    for outputs in _tensor_sets()[case]:
        pairs = [(InferenceResponse(outputs), ["OUTPUT1", "s", "B", "P", "big"])]
        answer = lane_server.LaneServer.encoded(5, pairs)
        plain = all(t._np is not None and t._np.dtype != np.object_
                    and t._np.flags.c_contiguous for t in outputs)
        assert (answer is not None) == plain
        server, theirs = _lane_peer()
        out = [b"\xff\xff\xff\xff\x00\x00\x00\x00", P.U32.pack(1)]
        response_frames.encode_responses(server.conn, pairs, out)
        want = _answered(server, theirs, P.frame(P.EXECUTE_DONE, 5, out), frames, monkeypatch)
        if answer is not None:
            server, theirs = _lane_peer()
            assert _answered(server, theirs, answer, frames, monkeypatch) == want


def test_lane_answer_hands_over_what_it_does_not_encode(frames):
    f32 = np.ones(4, np.float32)
    for pairs, limit in (
        ([(InferenceResponse([Tensor("A", f32)], error=TritonError("bad")), [])], 1 << 20),
        ([(InferenceResponse([Tensor("A", f32)], parameters={"p": 1}), [])], 1 << 20),
        ([(InferenceResponse([Tensor("B", np.array([b"b"], dtype=object))]), [])], 1 << 20),
        ([(InferenceResponse([Tensor("A", f32)]), [])], 63),  # more than max_data
    ):
        assert frames.encode_answer(pairs, P.EXECUTE_DONE, 0, limit) is None
    assert frames.encode_answer([(InferenceResponse([Tensor("A", f32)]), [])],
                                P.EXECUTE_DONE, 0, 64) is not None


def test_lane_answer_decoding_hands_over_what_it_does_not_decode(frames):
    """Errors, parameters, responses sent apart and malformed answers: None from C (the
    Python path answers, or raises its error)."""
    f32 = np.ones(4, np.float32)
    plain = frames.encode_answer([(InferenceResponse([Tensor("A", f32)]), [])],
                                 P.EXECUTE_DONE, 0, 1 << 20)
    n = struct.unpack_from("<I", plain, 16)[0]
    body, data = plain[20:20 + n], plain[20 + n:]
    assert frames.decode_answer(body, data).output_tensors()[0].as_numpy().tolist() == [1] * 4
    failed = P.frame(P.EXECUTE_DONE, 0, [P.U32.pack(3), P.U32.pack(3), b"bad", P.U32.pack(0)])
    sent_apart = P.frame(P.EXECUTE_DONE, 0, [b"\xff\xff\xff\xff\0\0\0\0", P.U32.pack(0),
                                             P.U64.pack(P.NO_BLOCK)])
    with_params = bytearray(body)
    with_params[28:32] = P.U32.pack(2)
    with_params[32:32] = b"{}"
    assert frames.decode_answer(bytes(with_params), data) is not None  # "{}": none
    with_params[32:34] = b"[]"
    for other in (failed[16:], sent_apart[16:], bytes(with_params), body[:-1],
                  body + b"\0", body[:34], body):
        if other is body:
            other, data = body, data[:8]  # the tensor past the end of its data
        assert frames.decode_answer(other, data) is None


def test_lane_answer_decoding_of_every_cut_and_flipped_byte(frames, monkeypatch):
    """An answer cut anywhere is left to Python (which raises its protocol error); one with
    any byte changed decodes in C only to what Python decodes it to."""
    f32 = np.arange(4, dtype=np.float32)
    pairs = [(InferenceResponse([Tensor("A", f32), Tensor("B", np.ones((2, 3), np.int64))]),
              [])]
    plain = frames.encode_answer(pairs, P.EXECUTE_DONE, 0, 1 << 20)
    n = struct.unpack_from("<I", plain, 16)[0]
    body, data = plain[20:20 + n], plain[20 + n:]
    for cut in range(len(body)):
        assert frames.decode_answer(body[:cut], data) is None
    monkeypatch.setattr(bls, "FRAMES", None)
    for at in range(len(body)):
        for value in (0, 1, 0x7F, 0xFF):
            changed = bytearray(body)
            changed[at] = value
            got = frames.decode_answer(bytes(changed), data)
            if got is None:
                continue
            final, want = bls._lane_answer(P.EXECUTE_DONE, bytes(changed), data)
            assert final and want._error is None
            assert [(t._name, t._dtype, t._dims, t.as_numpy().tolist())
                    for t in got.output_tensors()] == [
                (t._name, t._dtype, t._dims, t.as_numpy().tolist())
                for t in want.output_tensors()]


@pytest.mark.parametrize("spin", [0.0, 0.05])
def test_lane_reads_wait_without_the_gil(frames, monkeypatch, spin):
    """A caller's read of its answer, C and Python alike: whole frames from several
    writes, another thread (here the writer, which needs the GIL) running meanwhile,
    polling or sleeping at once; a closed lane is a LaneError."""
    for impl in (frames, None):
        monkeypatch.setattr(lane_calls, "FRAMES", impl)
        mine, theirs = socket.socketpair()
        frame = P.frame(P.EXECUTE_DONE, 3, [P.U32.pack(4), b"body", b"data" * 3000])

        def write():
            for part in (frame[:10], frame[10:5000], frame[5000:]):
                time.sleep(0.02)
                theirs.sendall(part)
            time.sleep(0.02)
            theirs.close()

        writer = threading.Thread(target=write)
        writer.start()
        calls = lane_calls.LaneCalls(lambda: spin)
        lane = lane_calls._Lane(mine, "path", "instance")
        kind, body, data = calls._read(lane)
        assert (kind, bytes(body), bytes(data)) == (P.EXECUTE_DONE, b"body", b"data" * 3000)
        with pytest.raises(lane_calls.LaneError, match="closed"):
            calls._read(lane)
        writer.join()
        mine.close()


def test_lane_reads_check_their_bounds(frames):
    mine, theirs = socket.socketpair()
    with pytest.raises(ValueError, match="outside the buffer"):
        frames.recv_polling(mine.fileno(), bytearray(8), 0, 9, 0.0)
    with pytest.raises(BufferError):
        frames.recv_polling(mine.fileno(), b"read-only", 0, 4, 0.0)
    with pytest.raises(OSError):
        frames.recv_polling(-1, bytearray(8), 0, 4, 0.0)
    mine.close()
    theirs.close()


def test_encode_rejects_a_block_outside_the_arena(frames):
    pairs = [(InferenceResponse([Tensor("A", np.ones(4, np.float32))]), [])]
    with pytest.raises(ValueError, match="out of range"):
        frames.encode_responses(pairs, lambda size: ARENA, 0, ARENA)


def test_names_are_decoded_once(frames, monkeypatch):
    """The C side caches tensor and output names: many distinct ones stay correct."""
    arena = Arena()
    names = ["n%d-%s" % (i, "x" * (i % 70)) for i in range(100)]
    requests = [{"rid": i, "outputs": [name],
                 "inputs": [arena.tensor(name, np.ones(1, np.int8))]}
                for i, name in zip(itertools.count(), names)]
    body = P.enc_execute(1, 64, requests)[16:]
    for _ in range(2):
        got = _decode(frames.decode_requests, arena.conn, body, monkeypatch)
        assert [(r._inputs[0]._name, r._outputs) for r in got] == [(n, [n]) for n in names]


def test_no_reference_leaks(frames):
    arena = Arena()
    body = _varied_frame(arena)
    bls_body = _bls_response(arena)
    owner = object()
    base = np.frombuffer(arena.mm, np.uint8)[64:]
    model = "".join(["mod", "el"])  # not interned: its count is this test's alone
    bad = _bad_frames(arena)["size and shape differ"]
    f32 = np.ones(4, np.float32)
    tensor = Tensor("A", f32)
    plain = InferenceResponse([tensor])
    failed = InferenceResponse([tensor], error=TritonError("bad"))
    requested = ["A"]
    call = InferenceRequest(model_name="m", inputs=[tensor], requested_output_names=["A"])
    watched = [owner, base, model, f32, tensor, plain, failed, requested, call]
    before = [sys.getrefcount(x) for x in watched]
    conn = OutConn()
    for _ in range(50):
        frames.decode_requests(body, 12, 5, base, len(base), 64, owner, model)
        frames.decode_tensors(bls_body, 32, len(bls_body), 3, base, len(base), 64)
        with pytest.raises(ValueError):  # cut short
            frames.decode_tensors(bls_body, 32, len(bls_body) - 1, 3, base, len(base), 64)
        with pytest.raises(ValueError):
            frames.decode_requests(bad, 12, 1, base, len(base), 64, owner, model)
        block = frames.encode_responses([(plain, requested)], conn.alloc_block,
                                        conn.out_addr, conn.out_size)
        conn.alloc.free(struct.unpack_from("<Q", block)[0])
        assert frames.encode_responses([(plain, []), (failed, [])], conn.alloc_block,
                                       conn.out_addr, conn.out_size) is None
        block, _ = frames.encode_tensors([tensor], conn.alloc_block, conn.out_addr,
                                         conn.out_size)
        conn.alloc.free(block)
        frames.encode_call(call, P.EXECUTE)
        answer = frames.encode_answer([(plain, requested)], P.EXECUTE_DONE, 0, 1 << 20)
        n = struct.unpack_from("<I", answer, 16)[0]
        assert frames.decode_answer(answer[20:20 + n], answer[20 + n:]) is not None
        assert frames.decode_answer(answer[20:20 + n], b"") is None
        assert frames.encode_answer([(failed, [])], P.EXECUTE_DONE, 0, 1 << 20) is None
    assert [sys.getrefcount(x) for x in watched] == before
