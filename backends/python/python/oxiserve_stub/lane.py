"""Lanes: direct BLS calls between two model processes (docs/design/python-backend.md
§7.2, docs/design/python-wire.md "Lanes").

A model instance whose model takes direct calls listens on a Unix socket, its lane
(`LaneServer`). After a BLS call that went through the server succeeded, the server may
offer the calling process that lane; the caller (`LaneCalls`) then sends later calls of
the same shape there, and the called process answers there: neither the server nor its
threads are on the call's path. The server validated that shape once; the called
process reports its lane executions for the model's statistics (LaneExecuted frames).

A frame on a lane is framed as on the instance socket (u32 len, u32 kind, u64 tag) and
its body is `u32 n`, the n bytes of an instance-socket body, then tensor bytes:
- a call: an Execute body of one request, its tensor offsets counted from those bytes;
- an answer: the ExecuteDone or Send body the called process would have sent the
  server, followed by a copy of the arena_out block it names (its offsets count from
  that block), which the called process frees at once.

Part of the transport: it knows frames and sockets, not pb_utils' types (the caller's
side builds responses through the `decode_answer` it is given).
"""

import itertools
import os
import socket
import struct
import threading
import time

import numpy as np

from . import protocol as P
from .arena_io import wire_source

LANE_CALL = 1000  # the main thread's queue kind of a call that came in through the lane
MAX_CALL_BYTES = 1 << 20  # larger inputs go through the server's arenas
MAX_SHAPES = 1024  # call shapes remembered per process
STATS_BATCH = 64  # lane executions reported in one LaneExecuted frame at most

_U32 = P.U32.unpack_from
_U64 = P.U64.unpack_from
_EXEC_HEAD = struct.Struct("<QIQIBQ")  # block, n, rid, flags, corr kind, corr u64
_STAT = struct.Struct("<QB")
_PAD = bytes(64)


def _lane_frame(kind, tag, body, data=()):
    parts = [P.U32.pack(len(body)), body]
    parts.extend(data)
    return P.frame(kind, tag, parts)


def _send_all(sock, data):
    view = memoryview(data)
    while view:
        view = view[sock.send(view):]


# ------------------------------------------------------------------ the called side

class _Peer:
    """One caller's connection to the lane."""

    __slots__ = ("sock", "buf", "lock")

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.lock = threading.Lock()  # answers may come from a response sender's thread


class LaneServer:
    """The lane of this instance: accepts callers, queues their calls for the main
    thread (`LANE_CALL` items: tag, (peer, body)), forwards the answers and reports the
    executions to the server."""

    def __init__(self, conn, path):
        """Listens at `path`; raises OSError when it cannot."""
        self.conn = conn
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(path)
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        listener.setblocking(False)
        self.listener = listener
        self.peers = {}  # fd -> _Peer
        self.calls = {}  # rid -> (peer, tag): calls not answered for good yet
        self.rids = itertools.count(P.LANE_RID)
        self.executions = []  # (ns, failed) not reported yet
        self.view = memoryview(bytearray(1 << 16))  # what a read of a caller's frames gets
        conn.inbox.watch(listener.fileno(), self._accept)

    # ------------------------------------------------------------ reading (inbox)
    def _accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            sock.setblocking(False)
            peer = _Peer(sock)
            fd = sock.fileno()
            self.peers[fd] = peer
            self.conn.inbox.watch(fd, lambda p=peer: self._read(p))

    def _read(self, peer):
        view = self.view
        try:
            n = peer.sock.recv_into(view)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            n = 0
        if not n:
            self.drop(peer)
            return
        buf = peer.buf
        if buf:
            buf += view[:n]
            data, start, have = buf, 0, len(buf)
        else:
            data, start, have = view, 0, n  # the usual case: whole frames in one read
        mainq = self.conn.inbox.mainq
        while have - start >= 4:
            end = start + 4 + _U32(data, start)[0]
            if end > have:
                break
            kind, tag = P.KIND_TAG.unpack_from(data, start + 4)
            if kind != P.EXECUTE:
                self.drop(peer)  # not a caller of ours
                return
            mainq.append((LANE_CALL, tag, (peer, bytearray(data[start + 16:end]))))
            start = end
        if buf:
            del buf[:start]
        elif start < have:
            buf += view[start:have]

    def drop(self, peer):
        """Closes a caller's connection."""
        fd = peer.sock.fileno()
        if self.peers.pop(fd, None) is not None:
            self.conn.inbox.unwatch(fd)
        peer.sock.close()

    # ------------------------------------------------------------ the main thread
    def requests(self, tag, peer, body, decode_requests, model_name):
        """The one request of a call (`body` as queued), its tensors viewing the call's
        bytes, and its rid, now open on `peer`."""
        n = _U32(body, 0)[0]
        rid = next(self.rids)
        struct.pack_into("<Q", body, 4 + 12, rid)
        data = np.frombuffer(body, np.uint8)[4 + n:]
        block, count = struct.unpack_from("<QI", body, 4)
        if block != 0 or count != 1:
            raise P.ProtocolError("a lane call holds one request")
        requests, p = decode_requests(bytes(body[4:4 + n]), 12, 1, data, len(data), 0,
                                      None, model_name)
        if p != n:
            raise P.ProtocolError("lane call of %d bytes, %d decoded" % (n, p))
        self.calls[rid] = (peer, tag)
        return requests

    def answer(self, rid, frame):
        """Forwards the ExecuteDone or Send frame (as built for the server) that answers
        request rid; returns True when it says the execution failed."""
        kind = _U32(frame, 4)[0]
        if kind == P.EXECUTE_DONE:
            code = _U32(frame, 16)[0]
            p = 24 + _U32(frame, 20)[0]
            n = _U32(frame, p)[0]
            block = _U64(frame, p + 4)[0]
            done = n > 0 or code != P.NO_ERROR  # else the senders answer (Send frames)
            failed = code != P.NO_ERROR
        elif kind == P.SEND:
            flags = _U32(frame, 16)[0]
            block = _U64(frame, 21)[0] if frame[20] else P.NO_BLOCK
            done = flags & P.FLAG_FINAL != 0
            failed = False
        else:
            raise ValueError("no answer frame")
        entry = self.calls.pop(rid, None) if done else self.calls.get(rid)
        data = ()
        if block != P.NO_BLOCK:
            alloc = self.conn.alloc
            data = (self.conn.out_mv[block:block + alloc.size_of(block)],)
        try:
            if entry is not None:
                peer, tag = entry
                message = _lane_frame(kind, tag, memoryview(frame)[16:], data)
                with peer.lock:
                    try:
                        _send_all(peer.sock, message)
                    except OSError:
                        pass  # the caller is gone; so is its wait
        finally:
            data = ()
            if block != P.NO_BLOCK:
                self.conn.alloc.free(block)
        return failed

    def executed(self, ns, failed):
        """Notes one lane execution for the statistics; reported by `report`."""
        self.executions.append((ns, failed))
        if len(self.executions) >= STATS_BATCH:
            self.report()

    def report(self):
        """Sends the executions not reported yet (the idle main thread calls it)."""
        done = self.executions
        if not done:
            return
        self.executions = []
        out = [P.U32.pack(len(done))]
        out.extend(_STAT.pack(ns, failed) for ns, failed in done)
        self.conn.send(P.frame(P.LANE_EXECUTED, 0, out))


# ------------------------------------------------------------------ the calling side

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
        self.pid = os.getpid()
        self.spin = spin
        self.shapes = {}  # call shape -> (path, instance)
        self.lanes = {}  # path -> _Lane
        self.lock = threading.Lock()

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
        if os.getpid() != self.pid:
            return
        with self.lock:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()
            self.shapes[shape] = (path, instance)

    def lane(self, shape):
        """The lane for a call of this shape, connected on first use and held for this
        call; None when there is none (or it is busy: the call goes through the
        server)."""
        if shape is None or os.getpid() != self.pid:
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
            message = _encode_call(request)
            sock = lane.sock
            try:
                _send_all(sock, message)
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
    """A lane call frame for `request`: an Execute body of one request whose tensors
    follow it."""
    out = [_EXEC_HEAD.pack(0, 1, 0, 0, 0, 0), P.U32.pack(0)]
    P.p_str(out, request._request_id)
    out.append(b"\x02\x00\x00\x00{}")
    out.append(P.U64.pack(0))  # timeout
    inputs = request._inputs
    out.append(P.U16.pack(len(inputs)))
    data = []
    offset = 0
    for t in inputs:
        dims, src = wire_source(t)
        if src.__class__ is bytes or src.__class__ is memoryview:
            nbytes = len(src)
        else:
            nbytes = src.nbytes
            src = src.data.cast("B") if nbytes else b""
        P.p_tensor(out, t._name, t._dtype, dims, offset, nbytes)
        data.append(src)
        pad = -nbytes % 64
        if pad:
            data.append(_PAD[:pad])
        offset += nbytes + pad
    outputs = request._outputs
    out.append(P.U16.pack(len(outputs)))
    for o in outputs:
        P.p_str(out, o)
    return _lane_frame(P.EXECUTE, 0, b"".join(out), data)
