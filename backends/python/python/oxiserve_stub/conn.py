"""The transport of one instance process: `Conn` owns the socket writer (one lock, one
write per frame), the inbox that reads it, pending arena_in releases and deferred frames,
the arena_out pool (its allocator, grown on demand) and the reply waiters of round trips.

It knows frames and arenas only, never pb_utils' types. The entry point (instance.serve)
creates the one Conn of its process and passes it to what needs it; there is no global.
"""

import collections
import ctypes
import itertools
import mmap
import os
import select
import socket
import sys
import threading

from . import protocol as P
from .arena import ALIGN, Allocator, ArenaFull, growth_error
from .inbox import Inbox

RELEASE_BATCH = 64
DEFAULT_GROWTH = 1 << 20  # Triton's shm-growth-byte-size


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
    def __init__(self, sock, in_mm, out_mm, arena_size, decode_bls_response, out_fd=None,
                 pool_size=None, growth_size=None):
        """decode_bls_response: see Inbox (the transport does not decode pb_utils types).
        arena_out's pool starts at pool_size bytes (all of it when None) and grows by
        multiples of growth_size, committed with posix_fallocate on out_fd."""
        self.sock = sock
        self.in_mm = in_mm
        self.out_mm = out_mm
        self.in_size = len(in_mm)
        self.in_addr, self._in_pin = _addr(in_mm) if len(in_mm) else (0, None)
        self.out_mv = memoryview(out_mm)
        self.out_size = len(out_mm)
        self.out_addr, self._out_pin = _addr(out_mm) if len(out_mm) else (0, None)
        self.alloc = Allocator(len(out_mm) if pool_size is None
                               else min(pool_size, len(out_mm)))
        self.out_fd = out_fd
        self.growth = growth_size or DEFAULT_GROWTH
        self.pool_key = "oxiserve:%d:out" % os.getpid()  # the name in growth errors
        self._grow_lock = threading.Lock()
        self.wlock = threading.Lock()
        self.pending = collections.deque()
        self.later = collections.deque()  # frames to write before the next one
        self.waiters = {}
        self.inbox = Inbox(self, sock, die, decode_bls_response)
        self.lane_server = None  # this instance's lane (lane.py), once it listens
        self._ids = itertools.count(1)

    @classmethod
    def open(cls, sock, in_fd, out_fd, layout, decode_bls_response):
        """A Conn on `sock` over the arenas in_fd and out_fd, laid out as `layout` (the
        spawn or attach message: arena_size, pool_size, growth_size) says. Keeps out_fd
        (the pool grows through it). Raises OSError or ValueError on unusable fds."""
        size = int(layout.get("arena_size", 0))
        in_mm = mmap.mmap(in_fd, size) if size else b""
        out_mm = mmap.mmap(out_fd, size) if size else bytearray()
        os.close(in_fd)
        return cls(sock, in_mm, out_mm, size, decode_bls_response, out_fd,
                   layout.get("pool_size"), layout.get("growth_size"))

    def abandon(self):
        """In a process forked from this one: the Conn is its parent's, so the child
        never writes or reads through it. Views of the parent's blocks that die in the
        child release nothing, and the child's copies of the socket and of out_fd are
        closed (an open copy would hide the parent's death from the server)."""
        self.pending = collections.deque(maxlen=0)
        self.later = collections.deque(maxlen=0)
        try:
            self.sock.close()
            if self.out_fd is not None:
                os.close(self.out_fd)
        except OSError:
            pass
        self.out_fd = None

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
        """A block of arena_out: from the pool, after the Release frames that may be
        waiting to be read, or from the pool grown for it; raises ArenaFull (Triton's
        text) when the pool cannot grow."""
        try:
            return self.alloc.alloc(size)
        except ArenaFull:
            self.inbox.drain()
        try:
            return self.alloc.alloc(size)
        except ArenaFull:
            return self._grow_for(size)

    def _grow_for(self, size):
        """Grows the pool as Triton's stub does (growth x (bytes / growth + 1) more),
        bounded by the arena's size, and allocates from it."""
        with self._grow_lock:
            try:
                return self.alloc.alloc(size)  # another thread grew it meanwhile
            except ArenaFull:
                pass
            alloc = self.alloc
            capacity = alloc.size
            need = (max(size, 1) + ALIGN - 1) & ~(ALIGN - 1)
            grown = min(capacity + self.growth * (need // self.growth + 1), self.out_size)
            if grown > capacity and self.out_fd is not None:
                try:
                    os.posix_fallocate(self.out_fd, capacity, grown - capacity)
                except OSError as e:
                    raise ArenaFull(growth_error(self.pool_key, capacity, e.strerror or e))
                alloc.grow(grown)
            try:
                return alloc.alloc(size)
            except ArenaFull:
                raise ArenaFull(growth_error(
                    self.pool_key, capacity, "the pool cannot grow past %d bytes, the size "
                    "of /dev/shm" % self.out_size)) from None

    # -------------------------------------------------------------- round trips
    def call(self, kind, tag, parts, waiter):
        self.waiters[tag] = waiter
        self.send(P.frame(kind, tag, parts))

    def take(self, q):
        """The next item of q (a queue.SimpleQueue filled by a waiter), reading frames
        while it is empty."""
        self.inbox.wait(lambda: not q.empty())
        return q.get_nowait()
