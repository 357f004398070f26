"""The instance's connection: socket writer (one lock, one sendall per frame), pending
arena_in releases, the arena_out allocator, reply waiters, and shared instance state."""

import collections
import ctypes
import itertools
import os
import sys
import threading

import numpy as np

from . import protocol as P
from .arena import Allocator

CONN = None  # the current process's Conn (None outside an instance process)

RELEASE_BATCH = 64


def current():
    return CONN


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
    def __init__(self, sock, in_mm, out_mm, arena_size):
        self.sock = sock
        self.in_mm = in_mm
        self.out_mm = out_mm
        self.in_size = len(in_mm)
        self.in_addr, self._in_pin = _addr(in_mm) if len(in_mm) else (0, None)
        self.out_u8 = np.frombuffer(out_mm, dtype=np.uint8) if len(out_mm) else None
        self.alloc = Allocator(len(out_mm))
        self.wlock = threading.Lock()
        self.pending = collections.deque()
        self.waiters = {}
        self._ids = itertools.count(1)
        # instance state
        self.model_name = ""
        self.instance_name = ""  # model_instance_name: what batch error texts name
        self.model_file = ""
        self.decoupled = False
        self.bls_allowed = False
        self.loop = None
        self.reader_ident = None

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

    def send(self, data):
        with self.wlock:
            if self.pending:
                data = self._take_releases() + data
            try:
                self.sock.sendall(data)
            except OSError:
                die(0)  # the server closed our socket: nothing left to do
        if len(self.pending) >= RELEASE_BATCH:
            self.flush_releases()

    def flush_releases(self):
        if not self.pending:
            return
        with self.wlock:
            data = self._take_releases()
            if data:
                try:
                    self.sock.sendall(data)
                except OSError:
                    die(0)

    def queue_release(self, off):
        """Called from Block.__del__ (any thread, possibly while this thread holds wlock)."""
        self.pending.append(off)
        # never write from the reader thread: it must keep draining the socket
        if (len(self.pending) >= RELEASE_BATCH and threading.get_ident() != self.reader_ident
                and self.wlock.acquire(False)):
            try:
                data = self._take_releases()
                if data:
                    self.sock.sendall(data)
            except OSError:
                die(0)
            finally:
                self.wlock.release()

    # -------------------------------------------------------------- round trips
    def call(self, kind, tag, parts, waiter):
        self.waiters[tag] = waiter
        self.send(P.frame(kind, tag, parts))
