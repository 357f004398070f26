"""First-fit allocator over an arena's pool (the stub owns arena_out's).

64-byte aligned blocks, a sorted free list with coalescing; the pool grows (`grow`) when
its owner has committed more of the arena. Thread-safe: the main thread (and sender
threads) allocate, whichever thread reads the socket frees on the server's Release frames.
"""

import bisect
import threading

ALIGN = 64


class ArenaFull(Exception):
    pass


def growth_error(key, capacity, why):
    """Triton's text for a pool that cannot grow (it names the size the pool has)."""
    return ("Failed to increase the shared memory pool size for key '%s' to %d bytes. If you "
            "are running Triton inside docker, use '--shm-size' flag to control the shared "
            "memory region size. Error: %s" % (key, capacity, why))


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
        raise ArenaFull("no free block of %d bytes in a pool of %d bytes (%d in use)"
                        % (nbytes, self.size, self.in_use()))

    def grow(self, size):
        """Extends the pool to `size` bytes (rounded down to ALIGN)."""
        size -= size % ALIGN
        with self._lock:
            if size <= self.size:
                return
            added = size - self.size
            if self._starts and self._starts[-1] + self._sizes[-1] == self.size:
                self._sizes[-1] += added
            else:
                self._starts.append(self.size)
                self._sizes.append(added)
            self.size = size

    def size_of(self, off):
        """The size of the allocated block at `off`."""
        return self._used[off]

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
