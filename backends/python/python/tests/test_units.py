import ctypes
import json
import mmap
import os
import random
import socket
import struct
import types

import numpy as np
import pytest

import c_python_backend_utils as c_pb
import triton_python_backend_utils as pb_utils
from oxiserve_stub import protocol as P
from oxiserve_stub.arena import Allocator, ArenaFull
from oxiserve_stub.conn import Conn
from oxiserve_stub.errors import format_exception
from oxiserve_stub.execute_frame import decode_execute


def _address(mm):
    return ctypes.addressof((ctypes.c_char * 1).from_buffer(mm))


def test_arena_first_fit_and_coalescing():
    a = Allocator(1024)
    x = a.alloc(1)
    y = a.alloc(65)
    z = a.alloc(64)
    assert (x, y, z) == (0, 64, 192)
    with pytest.raises(ArenaFull) as e:
        a.alloc(1024)
    assert "no free block of 1024 bytes" in str(e.value)
    assert a.free(y)
    assert not a.free(y)
    assert a.alloc(100) == 64  # first fit reuses the hole
    a.free(64)
    a.free(x)
    a.free(z)
    assert a.free_blocks() == [(0, 1024)]
    rnd = random.Random(1)
    live = []
    for _ in range(2000):
        if live and rnd.random() < 0.5:
            a.free(live.pop(rnd.randrange(len(live))))
        else:
            try:
                off = a.alloc(rnd.randrange(1, 200))
                assert off % 64 == 0
                live.append(off)
            except ArenaFull:
                pass
    for off in live:
        a.free(off)
    assert a.free_blocks() == [(0, 1024)]


def test_protocol_tensor_and_request_bytes():
    out = []
    P.p_tensor(out, "ab", 11, [2, -1], 128, 32)
    assert b"".join(out) == (b"\x02\x00\x00\x00ab" + b"\x0b\x02"
                             + struct.pack("<qq", 2, -1) + struct.pack("<QQ", 128, 32))
    fr = P.enc_execute(5, 64, [{"rid": 9, "inputs": [("x", 8, [1], 64, 4)],
                                "outputs": ["y"], "corr": "s", "flags": 1,
                                "request_id": "id", "timeout_us": 3}])
    ln, kind, tag = P.HDR.unpack_from(fr)
    assert (ln, kind, tag) == (len(fr) - 4, P.EXECUTE, 5)
    arena = mmap.mmap(-1, 4096)
    arena[64:68] = struct.pack("<i", -7)
    released = []
    conn = types.SimpleNamespace(in_addr=_address(arena), in_size=4096,
                                 queue_release=released.append)
    (q,) = decode_execute(conn, fr[16:], "m")
    assert (q._rid, q.flags(), q.correlation_id(), q.request_id(), q.parameters(),
            q.timeout(), q.requested_output_names(), q.model_name()) == (
        9, 1, "s", "id", "{}", 3, ["y"], "m")
    (x,) = q.inputs()
    assert (x.name(), x.triton_dtype(), x.as_numpy().tolist()) == ("x", 8, [-7])
    del q, x
    assert released == [64]  # the block goes back once nothing refers to it
    for cut in (1, 5, 20):
        with pytest.raises((P.ProtocolError, ValueError, struct.error)):
            decode_execute(conn, fr[16:-cut], "m")
    # a tensor past the end of the arena
    far = P.enc_execute(5, 64, [{"rid": 9, "inputs": [("x", 8, [1], 4096, 4)]}])
    with pytest.raises(ValueError):
        decode_execute(conn, far[16:], "m")


def test_release_frame_bytes():
    assert P.release_frame([64, 128]) == (
        struct.pack("<IIQ", 12 + 4 + 16, 39, 0) + struct.pack("<IQQ", 2, 64, 128))


def test_helpers_and_constants():
    assert pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START == 1
    assert pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_END == 2
    assert pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL == 1
    assert pb_utils.TRITONSERVER_REQUEST_RELEASE_ALL == 1
    assert pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE == 2
    assert pb_utils.triton_string_to_numpy("TYPE_STRING") is np.object_
    assert pb_utils.triton_string_to_numpy("TYPE_BOOL") is bool
    with pytest.raises(KeyError):
        pb_utils.triton_string_to_numpy("TYPE_BF16")
    for code in range(1, 14):
        t = pb_utils.triton_to_numpy_type(code)
        assert pb_utils.numpy_to_triton_type(t) == code
        assert pb_utils.numpy_to_triton_type(np.dtype(t)) == code
    assert pb_utils.triton_to_numpy_type(np.int64(11)) is np.float32
    assert pb_utils.triton_to_numpy_type(14) is None
    assert pb_utils.numpy_to_triton_type(np.bytes_) == 13
    assert pb_utils.numpy_to_triton_type(np.complex64) is None
    assert pb_utils.serialize_byte_tensor(np.array([], dtype=object)) == ()
    assert pb_utils.serialize_byte_tensor(np.array([1, 2])) is None
    ser = pb_utils.serialize_byte_tensor(np.array([[b"a", "bé"], [3, b""]], dtype=object))
    assert ser == b"\x01\x00\x00\x00a\x03\x00\x00\x00b\xc3\xa9\x01\x00\x00\x003" + \
        b"\x00\x00\x00\x00"
    assert pb_utils.deserialize_bytes_tensor(ser).tolist() == [b"a", "bé".encode(), b"3", b""]
    cfg = {"input": [{"name": "a"}], "output": [{"name": "b"}],
           "model_transaction_policy": {"decoupled": True}}
    assert pb_utils.get_input_config_by_name(cfg, "a") == {"name": "a"}
    assert pb_utils.get_input_config_by_name(cfg, "b") is None
    assert pb_utils.get_output_config_by_name(cfg, "b") == {"name": "b"}
    assert pb_utils.using_decoupled_model_transaction_policy(cfg) is True
    assert pb_utils.using_decoupled_model_transaction_policy({}) is False
    assert c_pb.Tensor is pb_utils.Tensor and c_pb.InferenceRequest is pb_utils.InferenceRequest
    assert pb_utils.TRITONSERVER_MEMORY_CPU != pb_utils.TRITONSERVER_MEMORY_GPU
    pb_utils.PreferredMemory(pb_utils.TRITONSERVER_MEMORY_CPU, 0)


def test_classes():
    e = pb_utils.TritonError("m")
    assert (e.message(), e.code()) == ("m", pb_utils.TritonError.INTERNAL)
    assert [pb_utils.TritonError.UNKNOWN, pb_utils.TritonError.NOT_FOUND,
            pb_utils.TritonError.INVALID_ARG, pb_utils.TritonError.UNAVAILABLE,
            pb_utils.TritonError.UNSUPPORTED, pb_utils.TritonError.ALREADY_EXISTS,
            pb_utils.TritonError.CANCELLED] == [0, 2, 3, 4, 5, 6, 7]
    t = pb_utils.Tensor("x", np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])
    assert t.shape() == [2, 2] and t.triton_dtype() == 11 and t.is_cpu()
    assert t.as_numpy().flags.c_contiguous
    back = pb_utils.Tensor.from_dlpack("y", t)
    np.testing.assert_array_equal(back.as_numpy(), t.as_numpy())
    back2 = pb_utils.Tensor.from_dlpack("z", t.to_dlpack())
    np.testing.assert_array_equal(back2.as_numpy(), t.as_numpy())
    np.testing.assert_array_equal(np.from_dlpack(t), t.as_numpy())
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(pb_utils.TritonModelException) as ex:
        pb_utils.Tensor("", np.zeros(1))
    assert str(ex.value) == "Tensor name cannot be an empty string."
    with pytest.raises(pb_utils.TritonModelException):
        pb_utils.Tensor("s", np.array([b"x"], dtype=object)).to_dlpack()
    r = pb_utils.InferenceRequest(model_name="m", inputs=[t], requested_output_names=["o"],
                                  correlation_id="c", parameters={"a": 1, "b": "x"})
    assert r.correlation_id() == "c" and json.loads(r.parameters()) == {"a": 1, "b": "x"}
    assert r.timeout() == 0 and r.flags() == 0 and r.request_id() == ""
    with pytest.raises(pb_utils.TritonModelException) as ex:
        pb_utils.InferenceRequest(model_name="m", inputs=[], requested_output_names=[],
                                  correlation_id=1.5)
    assert str(ex.value) == "Correlation ID must be integer or string"
    with pytest.raises(pb_utils.TritonModelException) as ex:
        pb_utils.InferenceResponse(parameters={"a": 1.5})
    assert str(ex.value) == ("Expect parameters values to have type bool/int/str, found type "
                             "<class 'float'>")
    with pytest.raises(pb_utils.TritonModelException) as ex:
        pb_utils.InferenceRequest(model_name="m", inputs=[], requested_output_names=[]).exec()
    assert str(ex.value) == "BLS is only supported during the 'execute' function."
    with pytest.raises(pb_utils.TritonModelException) as ex:
        pb_utils.MetricFamily("n", "d", pb_utils.MetricFamily.COUNTER)
    assert "custom metrics need a model instance" in str(ex.value)
    r.set_release_flags(pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE)
    assert r._release_flags == 2
    with pytest.raises(TypeError):
        r.set_release_flags(None)
    assert r.trace().get_context() is None
    resp = pb_utils.InferenceResponse([t], error=None)
    assert pb_utils.get_output_tensor_by_name(resp, "x") is t
    assert not resp.has_error() and resp.parameters() == "{}"
    assert pb_utils.Logger.INFO != pb_utils.Logger.VERBOSE


def test_format_exception_empty_message():
    try:
        raise KeyError()
    except KeyError as e:
        text = format_exception(e)
    assert text.startswith("KeyError: <EMPTY MESSAGE>\n\nAt:\n  ")
    assert "test_format_exception_empty_message" in text


def test_conn_release_batching():
    import socket
    from oxiserve_stub.conn import Conn
    a, b = socket.socketpair()
    c = Conn(b, mmap.mmap(-1, 4096), mmap.mmap(-1, 4096), 4096, None)
    for i in range(63):
        c.queue_release(i * 64)
    a.setblocking(False)
    with pytest.raises(BlockingIOError):
        a.recv(1)
    c.queue_release(63 * 64)  # the 64th goes out at once
    a.setblocking(True)
    data = a.recv(65536)
    assert data == P.release_frame([i * 64 for i in range(64)])
    c.queue_release(7)
    c.send(P.frame(P.LOG, 0, [b"x"]))  # pending releases precede the next frame
    assert a.recv(65536) == P.release_frame([7]) + P.frame(P.LOG, 0, [b"x"])


def test_str_dtype_tensor():
    from oxiserve_stub.tensors import serialize_bytes
    t = pb_utils.Tensor("s", np.array(["ab", "é"]))
    assert t.triton_dtype() == 13
    assert serialize_bytes(t.as_numpy()) == b"\x02\x00\x00\x00ab\x02\x00\x00\x00\xc3\xa9"


def test_bf16_through_dlpack():
    """A BF16 tensor has no numpy form; its DLPack capsule says bfloat16, and a bfloat16
    capsule becomes a BF16 tensor again (its bits unchanged)."""
    from oxiserve_stub.tensors import BF16, Tensor
    bits = np.array([[0x3f80, 0x4020], [0xc040, 0x0000]], dtype=np.uint16)  # 1, 2.5, -3, 0
    t = Tensor._wire("B", BF16, [2, 2], bits)
    with pytest.raises(pb_utils.TritonModelException, match="Tensor dtype is BF16"):
        t.as_numpy()
    for source in (t.to_dlpack(), t):
        back = pb_utils.Tensor.from_dlpack("C", source)
        assert back.triton_dtype() == BF16 and back.shape() == [2, 2]
        with pytest.raises(pb_utils.TritonModelException, match="cannot be converted"):
            back.as_numpy()
        np.testing.assert_array_equal(back._raw, bits)
    with pytest.raises((BufferError, TypeError, ValueError, RuntimeError)):
        np.from_dlpack(t)  # numpy cannot read bfloat16
    capsule = t.to_dlpack()
    pb_utils.Tensor.from_dlpack("D", capsule)
    with pytest.raises(pb_utils.TritonModelException):  # a capsule is consumed once
        pb_utils.Tensor.from_dlpack("E", capsule)
    torch = pytest.importorskip("torch")
    seen = torch.utils.dlpack.from_dlpack(t.to_dlpack())
    assert seen.dtype == torch.bfloat16 and seen.tolist() == [[1.0, 2.5], [-3.0, 0.0]]
    doubled = pb_utils.Tensor.from_dlpack("F", torch.utils.dlpack.to_dlpack(seen * 2))
    assert doubled.triton_dtype() == BF16
    assert torch.utils.dlpack.from_dlpack(doubled).tolist() == [[2.0, 5.0], [-6.0, 0.0]]


def test_arena_grow_extends_the_last_free_range():
    a = Allocator(256)
    x = a.alloc(128)
    a.grow(512)
    assert a.free_blocks() == [(128, 384)]
    assert a.alloc(384) == 128
    a.grow(640)
    a.grow(100)  # smaller: nothing changes
    assert (a.size, a.free_blocks()) == (640, [(512, 128)])
    a.free(x)
    assert a.free_blocks() == [(0, 128), (512, 128)]


def test_conn_pool_grows_as_tritons_and_stops_at_the_arena():
    """arena_out's pool starts at pool_size and grows by growth x (bytes / growth + 1),
    committed in the file; past the arena's size the error is Triton's."""
    ours, theirs = socket.socketpair()
    size = 1 << 20
    fds = []
    for name in ("in", "out"):
        fd = os.memfd_create(name)
        os.ftruncate(fd, size)
        fds.append(fd)
    c = Conn.open(theirs, fds[0], fds[1], {"arena_size": size, "pool_size": 4096,
                                           "growth_size": 4096}, None)
    try:
        assert c.alloc.size == 4096
        assert c.alloc_block(4096) == 0
        assert c.alloc_block(10000) == 4096  # 10048 bytes: grown by 3 x 4096
        assert c.alloc.size == 4096 + 3 * 4096
        # the grown part is committed (the server commits the first pool)
        assert os.fstat(fds[1]).st_blocks * 512 == 3 * 4096
        with pytest.raises(ArenaFull) as e:
            c.alloc_block(size)
        assert str(e.value) == (
            "Failed to increase the shared memory pool size for key 'oxiserve:%d:out' to "
            "16384 bytes. If you are running Triton inside docker, use '--shm-size' flag to "
            "control the shared memory region size. Error: the pool cannot grow past "
            "1048576 bytes, the size of /dev/shm" % os.getpid())
        assert c.alloc_block(1000) == 4096 + 10048  # what fits still fits
    finally:
        ours.close()
        theirs.close()
        os.close(fds[1])
