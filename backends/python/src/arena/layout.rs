//! How large a process's arenas are: the bytes mapped, the pool the owner
//! allocates from at first, and the steps it grows by (Triton's
//! `shm-default-byte-size` and `shm-growth-byte-size`).

use oxiserve_types::{Error, ErrorKind};

/// Where the arenas' files live; its size bounds how far a pool may grow.
pub const SHM_DIR: &str = "/dev/shm";

/// The bound when [`SHM_DIR`] cannot be read (the arenas' old fixed size).
const FALLBACK_BOUND: u64 = 1 << 30;

/// The sizes of one process's two arenas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArenaLayout {
    /// The bytes mapped, which is also the file's (sparse) size: the most
    /// the pool can grow to.
    pub size: u64,
    /// The bytes the pool holds at first.
    pub pool: u64,
    /// The pool grows by whole multiples of this.
    pub growth: u64,
}

impl ArenaLayout {
    /// Pools starting at `pool` bytes and growing by `growth`, up to what
    /// [`SHM_DIR`] holds, or to `max` when that is smaller.
    pub fn new(pool: u64, growth: u64, max: Option<u64>) -> Self {
        let shm = rustix::fs::statvfs(SHM_DIR)
            .map(|s| s.f_blocks.saturating_mul(s.f_frsize))
            .unwrap_or(FALLBACK_BOUND);
        Self::bounded(pool, growth, max.map_or(shm, |max| max.min(shm)))
    }

    /// Pools of `pool` bytes that may grow to `bound`.
    pub fn bounded(pool: u64, growth: u64, bound: u64) -> Self {
        let size = bound.max(pool);
        Self {
            size,
            pool,
            growth: growth.max(1),
        }
    }

    /// The pool size after growing `capacity` for a block of `needed`
    /// bytes, as Triton's stub grows it; `None` past `u64`.
    pub fn grown(&self, capacity: u64, needed: u64) -> Option<u64> {
        let steps = (needed / self.growth).checked_add(1)?;
        capacity.checked_add(self.growth.checked_mul(steps)?)
    }
}

/// Triton's error for a pool that cannot grow: `key` names the arena,
/// `capacity` is its size now (Triton names that size, not the one it
/// wanted), `why` the cause.
pub fn growth_error(key: &str, capacity: u64, why: &str) -> Error {
    Error::new(
        ErrorKind::ResourceExhausted,
        format!(
            "Failed to increase the shared memory pool size for key '{key}' to {capacity} bytes. \
             If you are running Triton inside docker, use '--shm-size' flag to control the \
             shared memory region size. Error: {why}"
        ),
    )
}

/// Triton's error for a pool that cannot even start.
pub fn init_error(key: &str, size: u64, why: &str) -> Error {
    Error::new(
        ErrorKind::ResourceExhausted,
        format!(
            "Unable to initialize shared memory key '{key}' to requested size ({size} bytes). \
             If you are running Triton inside docker, use '--shm-size' flag to control the \
             shared memory region size. Each Python backend model instance requires at least \
             1 MB of shared memory. Error: {why}"
        ),
    )
}
