"""BLS and the other calls out of a model from processes the model forks (e.g. the
workers of a `multiprocessing.Pool` calling `exec()`): docs/design/python-wire.md,
"Forked processes".

A forked process inherits its parent's Conn: a socket that the parent goes on reading
and writing, and the parent's allocators. It uses none of it. After a fork, the child's
Context is bound to a `_Lazy` connection, which attaches on first use: it sends one end
of a new socket pair over the instance's attach socket (SOCK_SEQPACKET: each message
whole, never mixed with another process's), the server answers on that socket with two
arenas for it, and the child talks over a Conn of its own from then on. A child that
makes no call costs nothing.
"""

import json
import os
import socket
import threading

from .conn import Conn


def install(ctx, attach_fd, decode_bls_response):
    """Once per instance process (serve): after each fork, the child's Context goes
    lazy. attach_fd: the attach socket the server gave at spawn."""
    attach = socket.socket(fileno=attach_fd)

    def in_child():
        ctx._conn.abandon()
        ctx.bind(_Lazy(ctx, attach, decode_bls_response))
        ctx.lanes.forked()

    os.register_at_fork(after_in_child=in_child)


class _Lazy:
    """Stands for the Conn of a forked process until it is first used."""

    def __init__(self, ctx, attach, decode_bls_response):
        self._ctx = ctx
        self._attach = attach
        self._decode = decode_bls_response
        self._lock = threading.Lock()
        self._conn = None

    def abandon(self):
        """Forked again before attaching: there is nothing to give up."""

    def __getattr__(self, name):
        with self._lock:
            if self._conn is None:
                self._conn = _attach(self._attach, self._decode)
                self._ctx.bind(self._conn)
        return getattr(self._conn, name)


def _attach(attach, decode_bls_response):
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        socket.send_fds(attach, [b"attach"], [theirs.fileno()])
    finally:
        theirs.close()
    header, fds, _, _ = socket.recv_fds(mine, 4096, 2)
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        mine.close()
        raise OSError("oxiserve python stub: the server did not attach this forked process")
    return Conn.open(mine, fds[0], fds[1], json.loads(header), decode_bls_response)
