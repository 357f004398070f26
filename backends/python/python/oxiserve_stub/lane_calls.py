"""The calling side of lanes (lane.py): the lanes the server offered this process, the
call shapes each takes, and one call through a lane. Like bls.py it sits between the
two sides: it reads the attributes of pb_utils' requests and speaks the lane's frames.
"""

import os
import socket
import struct
import threading
import time

from . import protocol as P
from .arena_io import wire_source
from .compiled import FRAMES
from .lane import lane_frame

MAX_CALL_BYTES = 1 << 20  # larger inputs go through the server's arenas
MAX_SHAPES = 1024  # call shapes remembered per process

_U32 = P.U32.unpack_from
_BATCH_OF_ONE = struct.pack("<QI", 0, 1)  # an Execute body's block (none) and request count
_PAD = bytes(64)


class _Lane:
    """This process's connection to one instance's lane; one call at a time."""

    __slots__ = ("sock", "path", "instance", "lock", "rest")

    def __init__(self, sock, path, instance):
        self.sock = sock
        self.path = path
        self.instance = instance  # Triton's instance name, for error texts
        self.lock = threading.Lock()
        self.rest = b""  # bytes read past the last answer frame


class LaneError(Exception):
    """The lane broke after the call was sent: the called process is gone."""


class LaneCalls:
    """The lanes this process was offered and the call shapes each takes."""

    def __init__(self, spin):
        """spin(): seconds to poll for an answer before sleeping (the instance's
        idle-spin setting)."""
        self.spin = spin
        self.shapes = {}  # call shape -> (path, instance)
        self.lanes = {}  # path -> _Lane
        self.lock = threading.Lock()
        self.direct = True  # False in a process the model forked: it calls the server

    def forked(self):
        """This process was forked from the instance's (forked.py): it calls through the
        server, and the lanes stay its parent's."""
        self.direct = False
        self.shapes = {}
        self.lanes = {}

    @staticmethod
    def shape(request):
        """What must match for a call to take the lane of an earlier one (the server
        validated that one); None when this call must go through the server: it carries
        what the server decides on (flags, a sequence, parameters, a timeout, a trace),
        names no outputs, or its inputs are large."""
        if (request._flags or request._corr or request._params != "{}" or request._timeout
                or request._trace is not None or not request._outputs
                or request._corr.__class__ is not int):
            return None
        inputs = []
        size = 0
        for t in request._inputs:
            a = t._np
            if a is None:
                dims = tuple(t._dims)
                size += len(t._raw)
            else:
                dims = a.shape
                size += a.nbytes
            inputs.append((t._name, t._dtype, dims))
        if size > MAX_CALL_BYTES:
            return None
        return (request._model_name, request._model_version, tuple(inputs),
                tuple(request._outputs))

    def offered(self, shape, path, instance):
        """The server offered the lane at `path` for calls shaped as `shape`."""
        if not self.direct:
            return
        with self.lock:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()
            self.shapes[shape] = (path, instance)

    def lane(self, shape):
        """The lane for a call of this shape, connected on first use and held for this
        call; None when there is none (or it is busy: the call goes through the
        server)."""
        if shape is None or not self.direct:
            return None
        found = self.shapes.get(shape)
        if found is None:
            return None
        path, instance = found
        with self.lock:
            lane = self.lanes.get(path)
            if lane is None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.connect(path)
                except OSError:  # the called process is gone: back to the server
                    sock.close()
                    self._forget(path)
                    return None
                lane = self.lanes[path] = _Lane(sock, path, instance)
        return lane if lane.lock.acquire(False) else None

    def _forget(self, path):
        """Drops the lane at `path` and the shapes it took (lock held)."""
        lane = self.lanes.pop(path, None)
        if lane is not None:
            lane.sock.close()
        for shape in [s for s, (p, _) in self.shapes.items() if p == path]:
            del self.shapes[shape]

    def call(self, lane, request, decode_answer):
        """Runs `request` through `lane` (held by `lane()`, released here). Returns the
        responses decode_answer made of the answer frames, or None when the call could
        not be sent (nothing ran: the caller goes through the server). Raises LaneError
        when the lane broke while the call ran."""
        try:
            try:
                message = _encode_call(request)
            except Exception:  # the server's path words what is wrong with the inputs
                return None
            sock = lane.sock
            try:
                sock.sendall(message)
            except OSError:
                with self.lock:
                    self._forget(lane.path)
                return None
            answers = []
            while True:
                kind, body, data = self._read(lane)
                final, response = decode_answer(kind, body, data)
                if response is not None:
                    answers.append(response)
                if final:
                    return answers
        except LaneError:
            with self.lock:
                self._forget(lane.path)
            raise
        finally:
            lane.lock.release()

    def _read(self, lane):
        """The next answer frame on the lane: (kind, body, data) as memoryviews over a
        buffer of its own (the response's tensors view it). Bytes read past the frame
        wait in `lane.rest` for the next one."""
        rest = lane.rest
        buf = bytearray(max(4096, len(rest)))
        got = len(rest)
        buf[:got] = rest
        got = self._recv(lane.sock, memoryview(buf), got, 16)
        ln, kind, _ = P.HDR.unpack_from(buf, 0)
        size = 4 + ln
        if size > len(buf):
            buf += bytearray(size - len(buf))
        if got < size:
            got = self._recv(lane.sock, memoryview(buf), got, size)
        lane.rest = bytes(buf[size:got])
        view = memoryview(buf)[:size]
        n = _U32(view, 16)[0]
        return kind, view[20:20 + n], view[20 + n:]

    def _recv(self, sock, view, got, want):
        """Reads into view[got:] until at least `want` bytes are there (no more than the
        view holds); polls for the spin time before sleeping. Returns the bytes there."""
        if FRAMES is not None:  # the same loop in C, without the GIL
            try:
                got = FRAMES.recv_polling(sock.fileno(), view, got, want, self.spin())
            except OSError as e:
                raise LaneError(str(e))
            if got < want:
                raise LaneError("the lane closed")
            return got
        spin_end = None
        while got < want:
            try:
                n = sock.recv_into(view[got:], 0, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                if spin_end is None:
                    spin_end = time.monotonic() + self.spin()
                if time.monotonic() < spin_end:
                    os.sched_yield()
                    continue
                try:
                    n = sock.recv_into(view[got:])
                except OSError as e:
                    raise LaneError(str(e))
            except OSError as e:
                raise LaneError(str(e))
            if n == 0:
                raise LaneError("the lane closed")
            got += n
        return got


def _encode_call(request):
    """A lane call frame for `request`: an Execute body of one request (as the server
    writes one) whose tensors follow it, each at a multiple of 64 bytes."""
    if FRAMES is not None:
        frame = FRAMES.encode_call(request, P.EXECUTE)
        if frame is not None:  # None: a tensor the code below must encode
            return frame
    descriptors = []
    data = []
    offset = 0
    for t in request._inputs:
        dims, src = wire_source(t)
        if src.__class__ is bytes or src.__class__ is memoryview:
            nbytes = len(src)
        else:
            nbytes = src.nbytes
            src = src.data.cast("B") if nbytes else b""
        descriptors.append((t._name, t._dtype, dims, offset, nbytes))
        data.append(src)
        pad = -nbytes % 64 or (64 if nbytes == 0 else 0)
        if pad:
            data.append(_PAD[:pad])
        offset += nbytes + pad
    out = [_BATCH_OF_ONE]
    P.enc_request(out, 0, descriptors, request._outputs, request_id=request._request_id)
    return lane_frame(P.EXECUTE, 0, b"".join(out), data)
