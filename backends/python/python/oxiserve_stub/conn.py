"""The transport of one instance process: `Conn` owns the socket writer (one lock, one
write per frame), the inbox that reads it, pending arena_in releases and deferred frames,
the arena_out allocator and the reply waiters of round trips.

It knows frames and arenas only, never pb_utils' types. The entry point (instance.serve)
creates the one Conn of its process and passes it to what needs it; there is no global.
"""

import collections
import ctypes
import itertools
import os
import select
import socket
import sys
import threading

from . import protocol as P
from .arena import Allocator, ArenaFull
from .inbox import Inbox

RELEASE_BATCH = 64


def die(status):
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(status)


def _addr(mm):
    buf = (ctypes.c_char * 1).from_buffer(mm)
    a = ctypes.addressof(buf)
    return a, buf  # keep `buf` referenced: it pins the mapping


class Conn:
    def __init__(self, sock, in_mm, out_mm, arena_size, decode_bls_response):
        """decode_bls_response: see Inbox (the transport does not decode pb_utils types)."""
        self.sock = sock
        self.in_mm = in_mm
        self.out_mm = out_mm
        self.in_size = len(in_mm)
        self.in_addr, self._in_pin = _addr(in_mm) if len(in_mm) else (0, None)
        self.out_mv = memoryview(out_mm)
        self.out_size = len(out_mm)
        self.out_addr, self._out_pin = _addr(out_mm) if len(out_mm) else (0, None)
        self.alloc = Allocator(len(out_mm))
        self.wlock = threading.Lock()
        self.pending = collections.deque()
        self.later = collections.deque()  # frames to write before the next one
        self.waiters = {}
        self.inbox = Inbox(self, sock, die, decode_bls_response)
        self._ids = itertools.count(1)

    def next_id(self):
        return next(self._ids)

    # -------------------------------------------------------------- writing
    def _take_releases(self):
        pend = self.pending
        offs = []
        while True:
            try:
                offs.append(pend.popleft())
            except IndexError:
                break
        return P.release_frame(offs) if offs else b""

    def _take_waiting(self):
        """Pending releases and deferred frames, as bytes to write first."""
        data = self._take_releases() if self.pending else b""
        later = self.later
        while later:
            try:
                data += later.popleft()
            except IndexError:
                break
        return data

    def send(self, data):
        with self.wlock:
            if self.pending or self.later:
                data = self._take_waiting() + data
            self._write(data)
        if len(self.pending) >= RELEASE_BATCH:
            self.flush_releases()

    def send_later(self, data):
        """Writes a frame before the next one, or when the idle main thread flushes
        (for finalizers: any thread, possibly while this thread holds wlock)."""
        self.later.append(data)

    def _write(self, data):
        """Writes all of data (wlock held). While the socket is full, reads what the
        server sent, so that neither side waits for the other forever."""
        sock = self.sock
        mv = memoryview(data)
        try:
            while mv:
                try:
                    mv = mv[sock.send(mv, socket.MSG_DONTWAIT):]
                except BlockingIOError:
                    self.inbox.drain()
                    select.select([], [sock], [], 0.01)
        except OSError:
            die(0)  # the server closed our socket: nothing left to do

    def flush_releases(self):
        """Writes pending releases and deferred frames now."""
        if not self.pending and not self.later:
            return
        with self.wlock:
            data = self._take_waiting()
            if data:
                self._write(data)

    def queue_release(self, off):
        """Called from Block.__del__ (any thread, possibly while this thread holds wlock)."""
        self.pending.append(off)
        # never write from the thread reading: it may be inside a dispatch
        if (len(self.pending) >= RELEASE_BATCH and not self.inbox.is_reading()
                and self.wlock.acquire(False)):
            try:
                data = self._take_releases()
                if data:
                    self._write(data)
            finally:
                self.wlock.release()

    def alloc_block(self, size):
        """A block of arena_out; raises ArenaFull when even the Release frames that may be
        waiting to be read free too little."""
        try:
            return self.alloc.alloc(size)
        except ArenaFull:
            self.inbox.drain()
            return self.alloc.alloc(size)

    # -------------------------------------------------------------- round trips
    def call(self, kind, tag, parts, waiter):
        self.waiters[tag] = waiter
        self.send(P.frame(kind, tag, parts))

    def take(self, q):
        """The next item of q (a queue.SimpleQueue filled by a waiter), reading frames
        while it is empty."""
        self.inbox.wait(lambda: not q.empty())
        return q.get_nowait()
