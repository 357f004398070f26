//! At most `--model-load-thread-count` model loads at a time, whoever asks
//! for them: start-up, the poller, load requests.

use parking_lot::{Condvar, Mutex};

/// A counting semaphore over loads.
#[derive(Debug)]
pub(super) struct LoadSlots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl LoadSlots {
    /// `count` loads at a time (at least one).
    pub fn new(count: usize) -> Self {
        Self {
            free: Mutex::new(count.max(1)),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free slot; it is free again when the guard drops.
    pub fn acquire(&self) -> LoadSlot<'_> {
        let mut free = self.free.lock();
        while *free == 0 {
            self.freed.wait(&mut free);
        }
        *free -= 1;
        LoadSlot(self)
    }
}

/// One load's slot.
pub(super) struct LoadSlot<'a>(&'a LoadSlots);

impl Drop for LoadSlot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock() += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    };

    #[test]
    fn never_more_than_count_at_once() {
        let slots = Arc::new(LoadSlots::new(2));
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (slots, now, most) = (slots.clone(), now.clone(), most.clone());
                std::thread::spawn(move || {
                    let _slot = slots.acquire();
                    let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(running, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    now.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }
}
