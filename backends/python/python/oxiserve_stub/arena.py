"""First-fit allocator over an arena (the stub owns arena_out).

64-byte aligned blocks, a sorted free list with coalescing. Thread-safe: the main thread
(and sender threads) allocate, whichever thread reads the socket frees on the server's
Release frames.
"""

import bisect
import threading

ALIGN = 64


class ArenaFull(Exception):
    pass


class Allocator:
    def __init__(self, size):
        self.size = size - size % ALIGN
        self._starts = [0] if self.size else []  # sorted free block starts
        self._sizes = [self.size] if self.size else []  # parallel to _starts
        self._used = {}  # offset -> size
        self._lock = threading.Lock()

    def alloc(self, nbytes):
        need = (max(nbytes, 1) + ALIGN - 1) & ~(ALIGN - 1)
        with self._lock:
            sizes = self._sizes
            for i in range(len(sizes)):
                s = sizes[i]
                if s >= need:
                    off = self._starts[i]
                    if s == need:
                        del self._starts[i]
                        del sizes[i]
                    else:
                        self._starts[i] = off + need
                        sizes[i] = s - need
                    self._used[off] = need
                    return off
        raise ArenaFull(
            "out of shared memory in the Python backend's output arena: cannot allocate "
            "%d bytes (arena of %d bytes, %d in use); raise "
            "--backend-config=python,shm-max-byte-size" % (nbytes, self.size, self.in_use()))

    def free(self, off):
        with self._lock:
            size = self._used.pop(off, None)
            if size is None:
                return False
            starts, sizes = self._starts, self._sizes
            i = bisect.bisect_left(starts, off)
            # merge with next
            if i < len(starts) and off + size == starts[i]:
                size += sizes[i]
                del starts[i]
                del sizes[i]
            # merge with previous
            if i > 0 and starts[i - 1] + sizes[i - 1] == off:
                sizes[i - 1] += size
            else:
                starts.insert(i, off)
                sizes.insert(i, size)
            return True

    def in_use(self):
        return sum(self._used.values())

    def free_blocks(self):
        with self._lock:
            return list(zip(self._starts, self._sizes))
