//! An arena's file and its shared mapping, and zero-copy views of its blocks.

use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{MmapOptions, MmapRaw};
use oxiserve_types::{Error, ErrorKind, Result};

use super::layout::{ArenaLayout, SHM_DIR, init_error};

/// Called with a block's offset when the last [`Bytes`] view of it is
/// dropped; the instance queues it for a `Release` frame.
pub type ReleaseHook = Arc<dyn Fn(u64) + Send + Sync>;

/// A file of fixed size mapped shared, read/write, in this process.
///
/// Safety argument: the mapping is an [`MmapRaw`], so no Rust reference
/// covers it as a whole. References to parts of it are created only for a
/// block's range: `&[u8]` by [`Arena::slice`] / [`Arena::view`] for blocks the
/// other process wrote and handed over (it does not write them again until we
/// release them), and a write by [`Arena::write`] only into blocks we
/// allocated and the other process does not read yet. A stub that breaks
/// these rules can change the bytes we read, but only bytes (`u8` has no
/// invalid values), and every offset it sends is bounds-checked.
#[derive(Clone)]
pub struct Arena {
    inner: Arc<Mapping>,
}

struct Mapping {
    map: MmapRaw,
    fd: OwnedFd,
}

impl Arena {
    /// Creates a file of `size` bytes, unnamed, in [`SHM_DIR`] (a memfd named
    /// `name` where that fails), and maps it. The file is sparse: only the
    /// parts [`Arena::commit`] allocated are ever written. The fd is
    /// close-on-exec: it reaches the stub through `SCM_RIGHTS`, not by
    /// inheritance.
    pub fn new(name: &str, size: u64) -> Result<Self> {
        let fail = |what: &str, e: std::io::Error| {
            Error::internal(format!(
                "python backend: cannot {what} the {size}-byte shared-memory arena '{name}': {e}"
            ))
        };
        if size == 0 || usize::try_from(size).is_err() {
            return Err(Error::new(
                ErrorKind::InvalidArg,
                format!("python backend: invalid shared-memory arena size {size}"),
            ));
        }
        let fd = create_file(name).map_err(|e| fail("create", e.into()))?;
        rustix::fs::ftruncate(&fd, size).map_err(|e| fail("size", e.into()))?;
        let map = MmapOptions::new()
            .len(size as usize)
            .map_raw(&fd)
            .map_err(|e| fail("map", e))?;
        Ok(Arena {
            inner: Arc::new(Mapping { map, fd }),
        })
    }

    /// An arena laid out as `layout` says, its first pool allocated, under
    /// `key` in errors.
    pub fn pool(key: &str, layout: &ArenaLayout) -> Result<Self> {
        let arena = Self::new(key, layout.size)?;
        arena
            .commit(0, layout.pool)
            .map_err(|e| init_error(key, layout.pool, &e.to_string()))?;
        Ok(arena)
    }

    /// Allocates the file's pages for `len` bytes at `offset`, so that
    /// writing them later cannot fail (a full [`SHM_DIR`] fails here, with
    /// an error, instead of a `SIGBUS` there).
    pub fn commit(&self, offset: u64, len: u64) -> std::io::Result<()> {
        if len == 0 || offset.checked_add(len).is_none_or(|end| end > self.size()) {
            return Err(std::io::Error::other(format!(
                "the pool cannot grow past {} bytes, the size of {SHM_DIR}",
                self.size()
            )));
        }
        rustix::fs::fallocate(
            &self.inner.fd,
            rustix::fs::FallocateFlags::empty(),
            offset,
            len,
        )
        .map_err(Into::into)
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.inner.map.len() as u64
    }

    /// The memfd, to send to the stub.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.inner.fd.as_fd()
    }

    /// The byte range of `len` bytes at `offset`, or an error if it is not
    /// inside the arena.
    fn range(&self, offset: u64, len: u64) -> Result<Range<usize>> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size() => Ok(offset as usize..end as usize),
            _ => Err(Error::internal(format!(
                "python backend: {len} bytes at offset {offset} are outside the {}-byte arena",
                self.size()
            ))),
        }
    }

    /// Copies `data` to `offset`.
    ///
    /// # Safety
    /// No slice or view of this process may overlap the range (the block was
    /// allocated by us and not yet handed to the stub).
    pub unsafe fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let range = self.range(offset, data.len() as u64)?;
        // SAFETY: the range is inside the mapping; the caller guarantees no
        // reference of ours covers it, and the stub does not touch it yet.
        unsafe {
            let dst = self.inner.map.as_mut_ptr().add(range.start);
            std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
        }
        Ok(())
    }

    /// The `len` bytes at `offset` (of a block the stub handed over).
    #[cfg(test)]
    pub fn slice(&self, offset: u64, len: u64) -> Result<&[u8]> {
        let range = self.range(offset, len)?;
        Ok(self.inner.slice(range))
    }

    /// A zero-copy view of the `len` bytes at `offset`, keeping the mapping
    /// alive. When the last clone of it is dropped, `release(offset)` runs.
    /// On error `release` is not called.
    pub fn view(&self, offset: u64, len: u64, release: ReleaseHook) -> Result<Bytes> {
        let range = self.range(offset, len)?;
        Ok(Bytes::from_owner(BlockView {
            mapping: Arc::clone(&self.inner),
            range,
            offset,
            release,
        }))
    }
}

/// An unnamed file in [`SHM_DIR`], or a memfd where `O_TMPFILE` is not
/// supported there.
fn create_file(name: &str) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{CWD, Mode, OFlags};
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    rustix::fs::openat(CWD, SHM_DIR, flags, Mode::from_raw_mode(0o600))
        .or_else(|_| rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC))
}

impl Mapping {
    fn slice(&self, range: Range<usize>) -> &[u8] {
        // SAFETY: callers checked `range` against the mapping's length; see
        // `Arena` for why no one writes these bytes while this reference lives.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(range.start), range.len()) }
    }
}

/// The owner behind a [`Bytes`] from [`Arena::view`].
struct BlockView {
    mapping: Arc<Mapping>,
    range: Range<usize>,
    offset: u64,
    release: ReleaseHook,
}

impl AsRef<[u8]> for BlockView {
    fn as_ref(&self) -> &[u8] {
        self.mapping.slice(self.range.clone())
    }
}

impl Drop for BlockView {
    fn drop(&mut self) {
        (self.release)(self.offset);
    }
}
