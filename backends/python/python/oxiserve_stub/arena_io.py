"""Tensors in the shared arenas: `Block` (the owner of an arena_in block, opened by
`in_block`; execute_frame.py decodes the views over it) and the copies of output tensors
into one arena_out block (`write_tensors`).

`conn` here is only what the transport exposes of the arenas: `in_addr`, `in_size` and
`queue_release` (arena_in), `alloc_block`, `alloc`, `out_mm` and `out_mv` (arena_out).
"""

import numpy as np

from .protocol import NO_BLOCK
from .tensors import BYTES, serialize_bytes


class Block:
    """Owner of one arena_in block. Every input view's .base is this object (numpy
    collapses view chains to the first non-array base); when the last view, Tensor and
    request referring to it dies, the block offset is queued for a Release frame."""

    __slots__ = ("__array_interface__", "_off", "_q", "__weakref__")

    def __init__(self, addr, off, extent, release):
        self.__array_interface__ = {
            "data": (addr + off, False), "shape": (extent,), "typestr": "|u1",
            "version": 3,
        }
        self._off = off
        self._q = release

    def __del__(self):
        try:
            self._q(self._off)
        except Exception:
            pass


def in_block(conn, block):
    """(owner, base) for the tensors of arena_in block `block`: its Block, spanning the
    rest of the arena (views are checked against it), and a u8 array over it; (None,
    None) for NO_BLOCK. Raises ValueError for a block outside the arena."""
    if block == NO_BLOCK:
        return None, None
    if block >= conn.in_size:
        raise ValueError("block outside arena_in")
    owner = Block(conn.in_addr, block, conn.in_size - block, conn.queue_release)
    return owner, np.asarray(owner)


def wire_source(t):
    """(dims, source) of a Tensor about to be sent: source is bytes (BYTES tensors) or a
    C-contiguous array."""
    if t._np is None:  # an input tensor passed through unchanged (BYTES or BF16)
        return list(t._dims), t._raw
    src = t._np
    dims = list(src.shape)
    if t._dtype == BYTES:
        return dims, serialize_bytes(src)
    if not src.flags.c_contiguous:
        src = np.ascontiguousarray(src)
    return dims, src


def write_tensors(conn, groups):
    """Copy the Tensors of one frame (a list of lists, e.g. one list per response) into
    one fresh arena_out block (docs/design/python-wire.md, "Output blocks"). Returns
    (block, list of lists of wire tuples (name, dtype, dims, offset, nbytes)); block is
    NO_BLOCK when there is no tensor. Raises ArenaFull when the block does not fit."""
    laid = []
    size = 0
    for ts in groups:
        for t in ts:
            dims, src = wire_source(t)
            n = len(src) if src.__class__ is bytes else src.nbytes
            laid.append((t, dims, src, size, n))
            size += (n + 63) & ~63 or 64
    if not laid:
        return NO_BLOCK, [[] for _ in groups]
    block = conn.alloc_block(size)
    try:
        return block, _copy(conn, block, groups, iter(laid))
    except BaseException:
        conn.alloc.free(block)
        raise


def _copy(conn, block, groups, laid):
    mm = conn.out_mm
    wire = []
    for ts in groups:
        out = []
        for _ in ts:
            t, dims, src, rel, n = next(laid)
            off = block + rel
            if n:
                if src.__class__ is bytes:
                    mm[off:off + n] = src
                elif n <= 4096:  # a copy of a small array is cheaper than a view
                    mm[off:off + n] = src.tobytes()
                else:
                    conn.out_mv[off:off + n] = memoryview(src).cast("B")
            out.append((t._name, t._dtype, dims, off, n))
        wire.append(out)
    return wire
