//! arena_in, the arena the server writes: an [`Arena`] and its [`Allocator`].

use std::os::fd::BorrowedFd;

use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use super::allocator::{Allocator, align_up};
use super::layout::{ArenaLayout, SHM_DIR, growth_error};
use super::mapping::Arena;

/// Where a batch's tensors went in arena_in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The block's offset: what the stub releases.
    pub offset: u64,
    /// The offset of each part, in the order given.
    pub parts: Vec<u64>,
}

/// arena_in: the server allocates and writes, the stub reads and releases.
/// Its pool grows when a block does not fit.
pub struct InArena {
    pub(super) arena: Arena,
    pub(super) allocator: Mutex<Allocator>,
    key: String,
    layout: ArenaLayout,
}

impl InArena {
    /// A new arena laid out as `layout` says; `key` names it in errors.
    pub fn new(key: &str, layout: ArenaLayout) -> Result<Self> {
        let arena = Arena::pool(key, &layout)?;
        Ok(InArena {
            allocator: Mutex::new(Allocator::new(layout.pool)),
            arena,
            key: key.to_string(),
            layout,
        })
    }

    /// The memfd, to send to the stub.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.arena.fd()
    }

    /// The bytes in live blocks.
    #[cfg(test)]
    pub fn used(&self) -> u64 {
        self.allocator.lock().used()
    }

    /// Allocates one block for all `parts` (each starting 64-byte aligned;
    /// empty parts take no room) and copies them in. Fails with
    /// `ResourceExhausted` when the pool has no room and cannot grow.
    pub fn write_block(&self, parts: &[&[u8]]) -> Result<Block> {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut total = 0u64;
        for part in parts {
            offsets.push(total);
            total = (part.len() as u64)
                .checked_add(total)
                .and_then(align_up)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::ResourceExhausted,
                        "python backend: the tensors' sizes overflow",
                    )
                })?;
        }
        let block = self.alloc(total)?;
        for (part, offset) in parts.iter().zip(&mut offsets) {
            *offset += block;
            // SAFETY: the block was just allocated and is ours alone until the
            // frame naming it is sent; `InArena` never hands out slices.
            unsafe { self.arena.write(*offset, part)? };
        }
        Ok(Block {
            offset: block,
            parts: offsets,
        })
    }

    /// A block of `len` bytes, from the pool as it is or grown for it.
    fn alloc(&self, len: u64) -> Result<u64> {
        let mut allocator = self.allocator.lock();
        if let Some(block) = allocator.alloc(len) {
            return Ok(block);
        }
        let capacity = allocator.capacity();
        let fail = |why: &str| growth_error(&self.key, capacity, why);
        let bound = self.arena.size();
        let grown = self
            .layout
            .grown(capacity, len)
            .unwrap_or(u64::MAX)
            .min(bound);
        if grown > capacity {
            self.arena
                .commit(capacity, grown - capacity)
                .map_err(|e| fail(&e.to_string()))?;
            allocator.grow(grown);
        }
        allocator.alloc(len).ok_or_else(|| {
            fail(&format!(
                "the pool cannot grow past {bound} bytes, the size of {SHM_DIR}"
            ))
        })
    }

    /// Frees the block at `offset` (from the stub's `Release`).
    pub fn release(&self, offset: u64) -> Result<()> {
        self.allocator.lock().free(offset).map(|_| ())
    }
}
