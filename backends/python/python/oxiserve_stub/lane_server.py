"""The called side of lanes (lane.py): the instance's listening socket, its callers'
connections read by whichever thread reads the inbox, their calls queued for the main
thread, the answers forwarded, the executions reported to the server (LaneExecuted).
"""

import itertools
import socket
import struct
import threading

import numpy as np

from . import protocol as P
from .compiled import FRAMES
from .lane import lane_frame

LANE_CALL = 1000  # the main thread's queue kind of a call that came in through the lane
STATS_BATCH = 64  # lane executions reported in one LaneExecuted frame at most
MAX_INLINE = 1 << 20  # larger answers are written to arena_out first (answer)

_U32 = P.U32.unpack_from
_U64 = P.U64.unpack_from
_STAT = struct.Struct("<QB")


class _Peer:
    """One caller's connection to the lane."""

    __slots__ = ("sock", "buf", "lock")

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.lock = threading.Lock()  # answers may come from a response sender's thread


class LaneAnswer:
    """A call's answer framed for the lane already (plain responses, encoded in C)."""

    __slots__ = ("frame",)

    def __init__(self, frame):
        self.frame = frame


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
            except OSError:  # none waiting (or the listener is gone)
                return
            # Blocking, for the answers (the caller reads while it waits for one);
            # reads never block (MSG_DONTWAIT).
            sock.setblocking(True)
            peer = _Peer(sock)
            fd = sock.fileno()
            self.peers[fd] = peer
            self.conn.inbox.watch(fd, lambda p=peer: self._read(p))

    def _read(self, peer):
        view = self.view
        try:
            n = peer.sock.recv_into(view, 0, socket.MSG_DONTWAIT)
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

    @staticmethod
    def encoded(tag, pairs):
        """The LaneAnswer of a call's plain responses (pairs: [(InferenceResponse,
        requested output names)]), their outputs copied once, into the frame; None when
        they need an ExecuteDone frame (as to the server: `answer` forwards it)."""
        if FRAMES is None:
            return None
        frame = FRAMES.encode_answer(pairs, P.EXECUTE_DONE, tag, MAX_INLINE)
        return None if frame is None else LaneAnswer(frame)

    def answer(self, rid, frame):
        """Forwards the LaneAnswer, or the ExecuteDone or Send frame (as built for the
        server), that answers request rid; returns True when it says the execution
        failed."""
        if frame.__class__ is LaneAnswer:
            entry = self.calls.pop(rid, None)
            if entry is not None:
                self._send(entry[0], frame.frame)
            return False
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
                self._send(peer, lane_frame(kind, tag, memoryview(frame)[16:], data))
        finally:
            data = ()
            if block != P.NO_BLOCK:
                self.conn.alloc.free(block)
        return failed

    @staticmethod
    def _send(peer, message):
        with peer.lock:
            try:
                peer.sock.sendall(message)
            except OSError:
                pass  # the caller is gone; so is its wait

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
