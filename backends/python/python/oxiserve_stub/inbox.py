"""Reading the instance socket without a reader thread (docs/design/python-wire.md,
"Threads on the stub").

Whichever thread waits for something reads: the main thread while it waits for its next
Init/Execute/Finalize frame, a BLS caller while it waits for its responses. One thread at
a time holds the reading role; the others sleep until what they wait for has been
dispatched to them, or the role is free. An Execute frame that arrives while the main
thread is idle is thus read by the main thread itself: no hand-over between threads.

Part of the transport: it knows frames, not pb_utils' types. Frames for the main thread
are queued as bytes; BlsResponse bodies are decoded by the function the entry point gives
(`decode_bls_response`), Replies and Releases are handled here.
"""

import collections
import os
import select
import socket
import struct
import sys
import threading
import time

from . import protocol as P

MAIN_KINDS = (P.INIT, P.EXECUTE, P.FINALIZE, P.AUTO_COMPLETE)
SOON = 4  # an idle wait up to SOON polling times long still counts as frames coming


class Inbox:
    def __init__(self, conn, sock, die, decode_bls_response):
        """decode_bls_response(conn, buf, start, end) -> (final, response or None): a
        BlsResponse body, buf[start:end], decoded by whichever thread reads (its tensors
        view arena_in)."""
        self.conn = conn
        self.sock = sock
        self.die = die
        self.decode_bls_response = decode_bls_response
        self.buf = bytearray(1 << 16)
        self.mv = memoryview(self.buf)
        self.start = self.have = 0
        self.role = threading.Lock()
        self.reader = None  # ident of the thread holding the role
        self.dispatching = False
        self.cv = threading.Condition(threading.Lock())
        self.waiting = 0
        self.mainq = collections.deque()  # (kind, tag, body) for the main thread
        self.idle_spin = 0.0  # seconds the idle main thread polls before it sleeps (Init)
        self.soon = True  # whether its last wait was shorter than SOON times that
        self.idle_since = None  # when the idle main thread began to wait
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        self.poller.register(self.wake_r, select.POLLIN)
        self.watched = {}  # fd -> what reads it when it is readable (the lane, lane.py)
        self.offer = None  # the latest LaneOffer: (bls_id, path, instance)

    # ---------------------------------------------------------------- waiting
    def wait(self, ready, timeout=None, spin=False):
        """Block until ready() is true, reading frames whenever no other thread does.
        Returns False if `timeout` seconds passed first. With `spin`, polls the socket
        for `idle_spin` seconds before sleeping in poll (see `_read_until`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ready():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if self.role.acquire(False):
                self.reader = threading.get_ident()
                try:
                    if not self._read_until(ready, deadline, spin):
                        return False
                finally:
                    self.reader = None
                    self.role.release()
                    self._notify()
                continue
            with self.cv:
                self.waiting += 1
                try:
                    if not ready() and self.role.locked():
                        self.cv.wait(0.05 if left is None else min(left, 0.05))
                finally:
                    self.waiting -= 1
        return True

    def wake(self):
        """Wakes the thread reading, so it checks its condition again (for conditions
        that do not come from a frame, e.g. a future completed)."""
        try:
            os.write(self.wake_w, b"\0")
        except BlockingIOError:
            pass
        self._notify()

    def drain(self):
        """Dispatches the frames that have arrived, without blocking, unless another
        thread is reading (it will) or this thread is inside a dispatch."""
        me = threading.get_ident()
        if self.reader == me:
            if not self.dispatching:
                self._receive(nonblocking=True)
            return
        if not self.role.acquire(False):
            return
        self.reader = me
        try:
            self._receive(nonblocking=True)
        finally:
            self.reader = None
            self.role.release()
            self._notify()

    def watch(self, fd, on_readable):
        """Whichever thread reads calls on_readable() when fd is readable (or closed);
        from the reading thread, or before any reads."""
        self.watched[fd] = on_readable
        self.poller.register(fd, select.POLLIN)

    def unwatch(self, fd):
        if self.watched.pop(fd, None) is not None:
            self.poller.unregister(fd)

    def is_reading(self):
        """Whether this thread holds the reading role (it must not block on writes)."""
        return self.reader == threading.get_ident()

    def _notify(self):
        if self.waiting:
            with self.cv:
                self.cv.notify_all()

    def _read_until(self, ready, deadline, spin=False):
        poll = self.poller.poll
        spin_end = 0
        if spin and self.idle_spin:
            # Under load the next frame usually follows soon: polling for it a while keeps
            # this process's caches warm and spares the server's send the cost of a
            # wake-up. Only while frames keep coming: after a wait longer than SOON times
            # the polling time, sleep at once (as the server's pump does, polling.rs).
            # The idle time counts from the first of the (timed) waits.
            if self.idle_since is None:
                self.idle_since = time.monotonic()
            if self.soon:
                spin_end = self.idle_since + self.idle_spin
        while not ready():
            events = None
            if spin_end:
                events = poll(0)
                while not events and time.monotonic() < spin_end:
                    os.sched_yield()
                    events = poll(0)
            if not events:
                ms = None
                if deadline is not None:
                    ms = int((deadline - time.monotonic()) * 1000)
                    if ms <= 0:
                        since = self.idle_since
                        if (since is not None
                                and time.monotonic() - since >= SOON * self.idle_spin):
                            self.soon = False
                        return False
                events = poll(ms)
            for fd, _ in events:
                if fd == self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                elif fd in self.watched:
                    self.watched[fd]()
                else:
                    self._receive(nonblocking=False)
        if spin and self.idle_spin:
            self.soon = time.monotonic() - self.idle_since < SOON * self.idle_spin
            self.idle_since = None
        return True

    # ---------------------------------------------------------------- frames
    def _receive(self, nonblocking):
        """One recv (or, non-blocking, as many as there is data for), then dispatch."""
        flags = socket.MSG_DONTWAIT if nonblocking else 0
        while True:
            if len(self.buf) - self.have < 4096:
                self._make_room()
            try:
                n = self.sock.recv_into(self.mv[self.have:], 0, flags)
            except BlockingIOError:
                return
            except OSError:
                self.die(0)
            if n == 0:
                self.die(0)  # the server closed the socket
            self.have += n
            self.dispatching = True
            try:
                self._dispatch()
            except (P.ProtocolError, ValueError, IndexError, struct.error,
                    UnicodeDecodeError) as e:
                sys.stderr.write("oxiserve python stub: malformed frame: %s\n" % e)
                self.die(P.MALFORMED_EXIT)
            finally:
                self.dispatching = False
            self._notify()
            if not nonblocking:
                return

    def _make_room(self):
        start, have = self.start, self.have
        if start:
            self.mv[:have - start] = self.mv[start:have]
            self.have = have - start
            self.start = 0
        if len(self.buf) - self.have < 4096:
            nb = bytearray(2 * len(self.buf))
            nb[:self.have] = self.mv[:self.have]
            self.mv.release()
            self.buf, self.mv = nb, memoryview(nb)

    def _dispatch(self):
        buf, mv = self.buf, self.mv
        start, have = self.start, self.have
        unpack_len = P.LEN.unpack_from
        unpack_kt = P.KIND_TAG.unpack_from
        conn = self.conn
        waiters = conn.waiters
        decode_bls_response = self.decode_bls_response
        while have - start >= 4:
            ln = unpack_len(buf, start)[0]
            if ln < 12:
                raise P.ProtocolError("frame length %d < 12" % ln)
            end = start + 4 + ln
            if end > have:
                if 4 + ln > len(buf) - start:
                    # a frame bigger than the room left: make it fit
                    self.start = start
                    self._grow(4 + ln)
                    return
                break
            kind, tag = unpack_kt(buf, start + 4)
            bs = start + 16
            if kind in MAIN_KINDS:
                self.mainq.append((kind, tag, bytes(mv[bs:end])))
            elif kind == P.BLS_RESPONSE:
                final, resp = decode_bls_response(conn, buf, bs, end)
                w = waiters.get(tag)
                if w is not None:
                    w(final, resp)
                del resp
            elif kind == P.REPLY:
                r = P.Reader(buf, bs, end)
                value = r.bool()
                r.done()
                w = waiters.pop(tag, None)
                if w is not None:
                    w(value)
            elif kind == P.METRIC_REPLY:
                r = P.Reader(buf, bs, end)
                code, message = r.error()
                value = r.f64()
                r.done()
                w = waiters.pop(tag, None)
                if w is not None:
                    w((message if code is not None else None, value))
            elif kind == P.MODEL_CONTROL_REPLY:
                r = P.Reader(buf, bs, end)
                code, message = r.error()
                ready = r.bool()
                r.done()
                w = waiters.pop(tag, None)
                if w is not None:
                    w((message if code is not None else None, ready))
            elif kind == P.LANE_OFFER:
                r = P.Reader(buf, bs, end)
                path = r.str()
                instance = r.str()
                r.done()
                self.offer = (tag, path, instance)
            elif kind == P.RELEASE_IN:
                r = P.Reader(buf, bs, end)
                n = r.u32()
                if bs + 4 + 8 * n != end:
                    raise P.ProtocolError("bad Release frame")
                free = conn.alloc.free
                for off in struct.unpack_from("<%dQ" % n, buf, bs + 4):
                    free(off)
            else:
                raise P.ProtocolError("unknown frame kind %d" % kind)
            start = end
        if start == have:
            start = have = 0
        self.start, self.have = start, have

    def _grow(self, need):
        start, have = self.start, self.have
        nb = bytearray(max(need, 2 * len(self.buf)))
        nb[:have - start] = self.mv[start:have]
        self.mv.release()
        self.buf, self.mv = nb, memoryview(nb)
        self.have = have - start
        self.start = 0
