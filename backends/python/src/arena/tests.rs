use std::sync::{Arc, Mutex};

use memmap2::MmapOptions;
use oxiserve_types::ErrorKind;

use super::allocator::{Allocator, align_up};
use super::in_arena::Block;
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
    let arena = InArena::new("test-in", ArenaLayout::bounded(1024, 1024, 1024)).unwrap();
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
    assert_eq!(
        e.message,
        "Failed to increase the shared memory pool size for key 'test-in' to 1024 bytes. If \
         you are running Triton inside docker, use '--shm-size' flag to control the shared \
         memory region size. Error: the pool cannot grow past 1024 bytes, the size of /dev/shm"
    );

    arena.release(block.offset).unwrap();
    assert!(arena.release(block.offset).is_err());
    let again = arena.write_block(&[&big[..100]]).unwrap();
    assert_eq!(again.offset, 0);
    assert_eq!(arena.arena.slice(0, 100).unwrap(), &big[..100]);
    arena.release(empty.offset).unwrap();
    arena.release(again.offset).unwrap();
    assert_eq!(arena.used(), 0);
}

#[test]
fn in_arena_pool_grows_in_steps_up_to_its_bound() {
    let arena = InArena::new("test-grow", ArenaLayout::bounded(1024, 512, 8192)).unwrap();
    let first = arena.write_block(&[&[1u8; 1000]]).unwrap();
    // 1000 bytes fit the first pool; 1500 more (1536 aligned) need it grown by
    // 4 x 512 (Triton's rule: growth x (bytes / growth + 1)).
    let second = arena.write_block(&[&[2u8; 1500]]).unwrap();
    assert_eq!((first.offset, second.offset), (0, 1024));
    assert_eq!(arena.allocator.lock().capacity(), 1024 + 4 * 512);
    assert_eq!(arena.arena.slice(1024, 1500).unwrap(), [2u8; 1500]);
    // Beyond the bound: Triton's error; what was there stays usable.
    let e = arena.write_block(&[&vec![3u8; 8000]]).unwrap_err();
    assert!(
        e.message
            .starts_with("Failed to increase the shared memory pool size"),
        "{e}"
    );
    arena.release(first.offset).unwrap();
    arena.release(second.offset).unwrap();
    assert_eq!(arena.write_block(&[&[4u8; 2000]]).unwrap().offset, 0);
}

#[test]
fn allocator_grows_its_last_free_range() {
    let mut a = Allocator::new(256);
    let x = a.alloc(128).unwrap();
    a.grow(512);
    assert_eq!(a.free, [(128, 384)]);
    assert_eq!(a.alloc(384), Some(128));
    a.grow(640);
    assert_eq!(a.free, [(512, 128)]);
    a.grow(100); // smaller: nothing changes
    assert_eq!(a.capacity(), 640);
    a.free(x).unwrap();
    assert_eq!(a.free, [(0, 128), (512, 128)]);
}

#[test]
fn layout_is_bounded_by_dev_shm() {
    let shm = rustix::fs::statvfs("/dev/shm").unwrap();
    let layout = ArenaLayout::new(1 << 20, 1 << 20, None);
    assert_eq!(layout.size, shm.f_blocks * shm.f_frsize);
    assert_eq!(
        ArenaLayout::new(1 << 20, 1 << 20, Some(4 << 20)).size,
        4 << 20
    );
    assert_eq!(layout.grown(1 << 20, 0), Some(2 << 20));
    assert_eq!(layout.grown(1 << 20, 3 << 20), Some(5 << 20));
}
