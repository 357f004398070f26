//! arena_in, the arena the server writes: an [`Arena`] and its [`Allocator`].

use std::os::fd::BorrowedFd;

use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use super::allocator::{Allocator, align_up};
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
pub struct InArena {
    pub(super) arena: Arena,
    allocator: Mutex<Allocator>,
}

impl InArena {
    /// A new arena of `size` bytes.
    pub fn new(name: &str, size: u64) -> Result<Self> {
        let arena = Arena::new(name, size)?;
        Ok(InArena {
            allocator: Mutex::new(Allocator::new(arena.size())),
            arena,
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
    /// `ResourceExhausted` when the arena has no room.
    pub fn write_block(&self, parts: &[&[u8]]) -> Result<Block> {
        let mut offsets = Vec::with_capacity(parts.len());
        let mut total = 0u64;
        for part in parts {
            offsets.push(total);
            total = (part.len() as u64)
                .checked_add(total)
                .and_then(align_up)
                .ok_or_else(|| self.full(u64::MAX))?;
        }
        // The guard must be gone before `full` locks again.
        let block = self.allocator.lock().alloc(total);
        let block = block.ok_or_else(|| self.full(total))?;
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

    fn full(&self, needed: u64) -> Error {
        let allocator = self.allocator.lock();
        Error::new(
            ErrorKind::ResourceExhausted,
            format!(
                "python backend: the shared-memory arena has no room for {needed} bytes \
                 ({} of {} bytes in use); raise --backend-config=python,shm-max-byte-size",
                allocator.used(),
                allocator.capacity()
            ),
        )
    }

    /// Frees the block at `offset` (from the stub's `Release`).
    pub fn release(&self, offset: u64) -> Result<()> {
        self.allocator.lock().free(offset).map(|_| ())
    }
}
