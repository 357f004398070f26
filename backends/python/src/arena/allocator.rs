//! The block allocator behind an arena: offsets only, no memory.

use std::collections::HashMap;

use oxiserve_types::{Error, Result};

/// Alignment of every block size and offset.
pub const ALIGN: u64 = 64;

/// Rounds `n` up to a multiple of [`ALIGN`]; `None` on overflow.
pub fn align_up(n: u64) -> Option<u64> {
    Some(n.checked_add(ALIGN - 1)? & !(ALIGN - 1))
}

/// First-fit allocator over a sorted, coalesced free list. Sizes and offsets
/// are multiples of [`ALIGN`]; the capacity grows by [`Allocator::grow`]. A request
/// for 0 bytes gets a block of [`ALIGN`] bytes, so every allocation has its
/// own offset and must be freed (the stub's `arena.py` does the same).
#[derive(Debug)]
pub struct Allocator {
    capacity: u64,
    /// Free ranges `(offset, len)`, sorted by offset, never adjacent.
    pub(super) free: Vec<(u64, u64)>,
    /// Live blocks: offset -> len.
    live: HashMap<u64, u64>,
}

impl Allocator {
    /// An empty allocator over `size` bytes (rounded down to [`ALIGN`]).
    pub fn new(size: u64) -> Self {
        let capacity = size & !(ALIGN - 1);
        Allocator {
            capacity,
            free: if capacity > 0 {
                vec![(0, capacity)]
            } else {
                vec![]
            },
            live: HashMap::new(),
        }
    }

    /// The bytes that can be allocated in all.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Extends the capacity to `capacity` bytes (rounded down to [`ALIGN`]);
    /// a smaller one changes nothing.
    pub fn grow(&mut self, capacity: u64) {
        let capacity = capacity & !(ALIGN - 1);
        if capacity <= self.capacity {
            return;
        }
        let added = capacity - self.capacity;
        match self.free.last_mut() {
            Some((offset, len)) if *offset + *len == self.capacity => *len += added,
            _ => self.free.push((self.capacity, added)),
        }
        self.capacity = capacity;
    }

    /// The bytes in live blocks (sizes rounded up to [`ALIGN`]).
    #[cfg(test)]
    pub fn used(&self) -> u64 {
        self.live.values().sum()
    }

    /// Allocates `n` bytes (at least [`ALIGN`]); `None` when no free range is
    /// large enough.
    pub fn alloc(&mut self, n: u64) -> Option<u64> {
        let len = align_up(n.max(1))?;
        let i = self.free.iter().position(|&(_, free)| free >= len)?;
        let (offset, free) = self.free[i];
        if free == len {
            self.free.remove(i);
        } else {
            self.free[i] = (offset + len, free - len);
        }
        self.live.insert(offset, len);
        Some(offset)
    }

    /// Frees the block at `offset`, returning its size. Unknown offsets (never
    /// allocated, or already freed) are an error and change nothing: they
    /// come from the other process.
    pub fn free(&mut self, offset: u64) -> Result<u64> {
        let len = self.live.remove(&offset).ok_or_else(|| {
            Error::internal(format!(
                "python backend: release of arena offset {offset}, which is not an allocated block"
            ))
        })?;
        let i = self.free.partition_point(|&(o, _)| o < offset);
        let joins_prev = i > 0 && {
            let (o, l) = self.free[i - 1];
            o + l == offset
        };
        let joins_next = i < self.free.len() && offset + len == self.free[i].0;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.free[i - 1].1 += len + self.free[i].1;
                self.free.remove(i);
            }
            (true, false) => self.free[i - 1].1 += len,
            (false, true) => self.free[i] = (offset, len + self.free[i].1),
            (false, false) => self.free.insert(i, (offset, len)),
        }
        Ok(len)
    }
}
