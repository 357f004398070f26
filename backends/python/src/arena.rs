//! Shared-memory arenas between the server and one stub process
//! (`docs/design/python-wire.md`, "Arenas").
//!
//! Each arena is a memfd mapped shared in both processes and allocated by its
//! writer only: the server allocates in arena_in ([`InArena`]), the stub in
//! arena_out (read here through [`Arena::view`]). A block is freed by its
//! owner after the reader sends `Release` with its offset.

use std::collections::HashMap;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use memmap2::{MmapOptions, MmapRaw};
use oxiserve_types::{Error, ErrorKind, Result};

/// Alignment of every block size and offset.
pub const ALIGN: u64 = 64;

/// Rounds `n` up to a multiple of [`ALIGN`]; `None` on overflow.
pub fn align_up(n: u64) -> Option<u64> {
    Some(n.checked_add(ALIGN - 1)? & !(ALIGN - 1))
}

/// First-fit allocator over a sorted, coalesced free list. Sizes and offsets
/// are multiples of [`ALIGN`]; the capacity is fixed at creation. A request
/// for 0 bytes gets a block of [`ALIGN`] bytes, so every allocation has its
/// own offset and must be freed (the stub's `arena.py` does the same).
#[derive(Debug)]
pub struct Allocator {
    capacity: u64,
    /// Free ranges `(offset, len)`, sorted by offset, never adjacent.
    free: Vec<(u64, u64)>,
    /// Live blocks: offset -> len.
    live: HashMap<u64, u64>,
    used: u64,
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
            used: 0,
        }
    }

    /// The bytes that can be allocated in all.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The bytes in live blocks (sizes rounded up to [`ALIGN`]).
    pub fn used(&self) -> u64 {
        self.used
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
        self.used += len;
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
        self.used -= len;
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

/// Called with a block's offset when the last [`Bytes`] view of it is
/// dropped; the instance queues it for a `Release` frame.
pub type ReleaseHook = Arc<dyn Fn(u64) + Send + Sync>;

/// A memfd of fixed size mapped shared, read/write, in this process.
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
    /// Creates a memfd named `name` (shown in `/proc/<pid>/fd`), sized `size`
    /// bytes and mapped. The fd is close-on-exec: it reaches the stub through
    /// `SCM_RIGHTS`, not by inheritance.
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
        let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| fail("create", e.into()))?;
        rustix::fs::ftruncate(&fd, size).map_err(|e| fail("size", e.into()))?;
        let map = MmapOptions::new()
            .len(size as usize)
            .map_raw(&fd)
            .map_err(|e| fail("map", e))?;
        Ok(Arena {
            inner: Arc::new(Mapping { map, fd }),
        })
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
    arena: Arena,
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
        self.lock().used()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Allocator> {
        // The allocator's state stays consistent even if a holder panicked.
        self.allocator
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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
        let block = self.lock().alloc(total);
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
        let allocator = self.lock();
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
        self.lock().free(offset).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_first_fit() {
        let mut a = Allocator::new(1000); // rounds down to 960
        assert_eq!(a.capacity(), 960);
        assert_eq!(a.alloc(1), Some(0));
        assert_eq!(a.alloc(64), Some(64));
        assert_eq!(a.alloc(65), Some(128));
        assert_eq!(a.used(), 256);
        assert_eq!(a.alloc(0), Some(256), "zero bytes get a block of their own");
        assert_eq!(a.alloc(0), Some(320));
        assert_eq!(a.used(), 384);
        assert_eq!(a.alloc(u64::MAX), None);
        assert_eq!(a.alloc(u64::MAX - 10), None);
    }

    #[test]
    fn full_arena_and_reuse() {
        let mut a = Allocator::new(256);
        let blocks: Vec<u64> = (0..4).map(|_| a.alloc(64).unwrap()).collect();
        assert_eq!(blocks, [0, 64, 128, 192]);
        assert_eq!(a.alloc(1), None);
        assert_eq!(a.used(), 256);
        assert_eq!(a.free(128).unwrap(), 64);
        assert_eq!(a.alloc(65), None, "one free block of 64");
        assert_eq!(a.alloc(10), Some(128));
        assert_eq!(a.alloc(1), None);
        assert!(Allocator::new(63).alloc(0).is_none());
    }

    #[test]
    fn bad_frees_change_nothing() {
        let mut a = Allocator::new(256);
        let x = a.alloc(64).unwrap();
        assert!(a.free(x + 64).is_err());
        assert!(a.free(1).is_err());
        a.free(x).unwrap();
        let e = a.free(x).unwrap_err();
        assert!(e.message.contains("not an allocated block"), "{e}");
        assert_eq!(a.used(), 0);
        assert_eq!(a.free, [(0, 256)]);
    }

    #[test]
    fn out_of_order_frees_coalesce() {
        let mut a = Allocator::new(640);
        let b: Vec<u64> = (0..5).map(|_| a.alloc(128).unwrap()).collect();
        a.free(b[1]).unwrap();
        a.free(b[3]).unwrap();
        assert_eq!(a.free, [(128, 128), (384, 128)]);
        a.free(b[2]).unwrap(); // joins both sides
        assert_eq!(a.free, [(128, 384)]);
        a.free(b[4]).unwrap(); // joins the previous range
        assert_eq!(a.free, [(128, 512)]);
        a.free(b[0]).unwrap(); // joins the next range
        assert_eq!(a.free, [(0, 640)]);
        assert_eq!(a.used(), 0);
        assert_eq!(a.alloc(640), Some(0));
    }

    #[test]
    fn first_fit_takes_the_lowest_range_that_fits() {
        let mut a = Allocator::new(1024);
        let b: Vec<u64> = (0..4).map(|_| a.alloc(256).unwrap()).collect();
        a.free(b[0]).unwrap();
        a.free(b[2]).unwrap();
        assert_eq!(a.alloc(64), Some(0));
        assert_eq!(a.alloc(256), Some(512));
        assert_eq!(a.alloc(192), Some(64));
        assert_eq!(a.alloc(1), None);
    }

    /// xorshift64*: a tiny deterministic generator for the model test.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn random_sequences_match_a_model() {
        const SIZE: u64 = 64 * 64;
        for seed in 1..=200u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut a = Allocator::new(SIZE);
            // The model: which 64-byte units are taken, and by which block.
            let mut units = [false; (SIZE / ALIGN) as usize];
            let mut live: Vec<(u64, u64)> = Vec::new();
            for _ in 0..300 {
                if live.is_empty() || rng.below(3) > 0 {
                    let n = match rng.below(4) {
                        0 => 0,
                        1 => rng.below(64) + 1,
                        2 => rng.below(512),
                        _ => rng.below(SIZE / 2),
                    };
                    let len = align_up(n.max(1)).unwrap();
                    let units_needed = (len / ALIGN) as usize;
                    let model_fit = units
                        .windows(units_needed)
                        .position(|w| w.iter().all(|taken| !taken));
                    match a.alloc(n) {
                        Some(offset) => {
                            let first = (offset / ALIGN) as usize;
                            assert_eq!(Some(first), model_fit, "first fit, seed {seed}");
                            units[first..first + units_needed].fill(true);
                            live.push((offset, len));
                        }
                        None => assert_eq!(model_fit, None, "seed {seed}"),
                    }
                } else {
                    let (offset, len) = live.swap_remove(rng.below(live.len() as u64) as usize);
                    assert_eq!(a.free(offset).unwrap(), len);
                    let first = (offset / ALIGN) as usize;
                    units[first..first + (len / ALIGN) as usize].fill(false);
                }
                assert_eq!(a.used(), live.iter().map(|(_, l)| l).sum::<u64>());
                // The free list is sorted, coalesced, and is exactly the free units.
                let mut expected = Vec::new();
                for (i, &taken) in units.iter().enumerate() {
                    let o = i as u64 * ALIGN;
                    match expected.last_mut() {
                        Some((start, len)) if !taken && *start + *len == o => *len += ALIGN,
                        _ if !taken => expected.push((o, ALIGN)),
                        _ => {}
                    }
                }
                assert_eq!(a.free, expected, "seed {seed}");
            }
        }
    }

    #[test]
    fn write_slice_and_bounds() {
        let arena = Arena::new("test-arena", 4096).unwrap();
        assert_eq!(arena.size(), 4096);
        unsafe { arena.write(64, b"hello").unwrap() };
        assert_eq!(arena.slice(64, 5).unwrap(), b"hello");
        assert_eq!(arena.slice(4096, 0).unwrap(), b"");
        assert!(arena.slice(4000, 97).is_err());
        assert!(arena.slice(u64::MAX, 2).is_err());
        assert!(unsafe { arena.write(4095, b"ab") }.is_err());
        assert!(Arena::new("zero", 0).is_err());
    }

    #[test]
    fn another_mapping_of_the_fd_sees_the_same_bytes() {
        let arena = Arena::new("test-arena", 8192).unwrap();
        // What the stub does: map the fd it received, shared.
        let fd = arena.fd().try_clone_to_owned().unwrap();
        let stub = MmapOptions::new().len(8192).map_raw(&fd).unwrap();
        unsafe { arena.write(128, &[1, 2, 3]).unwrap() };
        let seen = unsafe { std::slice::from_raw_parts(stub.as_ptr().add(128), 3) };
        assert_eq!(seen, [1, 2, 3]);
        unsafe { std::ptr::copy_nonoverlapping([9u8, 8].as_ptr(), stub.as_mut_ptr().add(4096), 2) };
        assert_eq!(arena.slice(4096, 2).unwrap(), [9, 8]);
        // Close-on-exec on our side.
        let flags = rustix::io::fcntl_getfd(arena.fd()).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
    }

    #[test]
    fn views_release_once_when_the_last_clone_drops() {
        let released = Arc::new(Mutex::new(Vec::new()));
        let hook: ReleaseHook = {
            let released = Arc::clone(&released);
            Arc::new(move |offset| released.lock().unwrap().push(offset))
        };
        let arena = Arena::new("test-arena", 4096).unwrap();
        unsafe { arena.write(256, b"abcdef").unwrap() };
        let view = arena.view(256, 6, Arc::clone(&hook)).unwrap();
        let part = view.slice(2..4);
        let clone = view.clone();
        drop(arena); // the view keeps the mapping alive
        assert_eq!(&view[..], b"abcdef");
        drop(view);
        drop(clone);
        assert!(released.lock().unwrap().is_empty());
        assert_eq!(&part[..], b"cd");
        drop(part);
        assert_eq!(*released.lock().unwrap(), [256]);

        let arena = Arena::new("test-arena", 4096).unwrap();
        assert!(arena.view(4032, 65, hook).is_err());
        assert_eq!(
            *released.lock().unwrap(),
            [256],
            "no release for a failed view"
        );
    }

    #[test]
    fn in_arena_blocks() {
        let arena = InArena::new("test-in", 1024).unwrap();
        let a: &[u8] = &[1; 10];
        let b: &[u8] = &[];
        let c: &[u8] = &[3; 64];
        let d: &[u8] = &[4; 1];
        let block = arena.write_block(&[a, b, c, d]).unwrap();
        assert_eq!(block.offset, 0);
        assert_eq!(block.parts, [0, 64, 64, 128]);
        assert_eq!(arena.used(), 192);
        assert_eq!(arena.arena.slice(0, 10).unwrap(), a);
        assert_eq!(arena.arena.slice(64, 64).unwrap(), c);
        assert_eq!(arena.arena.slice(128, 1).unwrap(), d);

        let empty = arena.write_block(&[]).unwrap();
        assert_eq!(
            empty,
            Block {
                offset: 192,
                parts: vec![]
            }
        );
        assert_eq!(arena.used(), 256);

        let big = vec![7u8; 800];
        let e = arena.write_block(&[&big]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::ResourceExhausted);
        assert!(e.message.contains("shm-max-byte-size"), "{e}");
        assert!(e.message.contains("256 of 1024"), "{e}");

        arena.release(block.offset).unwrap();
        assert!(arena.release(block.offset).is_err());
        let again = arena.write_block(&[&big[..100]]).unwrap();
        assert_eq!(again.offset, 0);
        assert_eq!(arena.arena.slice(0, 100).unwrap(), &big[..100]);
        arena.release(empty.offset).unwrap();
        arena.release(again.offset).unwrap();
        assert_eq!(arena.used(), 0);
    }
}
