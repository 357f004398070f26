//! What one instance holds: the batches its scheduler handed it that have
//! not ended. An instance executes its batches one after another, but a
//! backend may take the next one before the current one ends (the Python
//! backend holds a second batch while its process executes one, so that the
//! process never waits for work). Such a batch starts only when the batch
//! before it ends; until then its requests are pending, as Triton counts
//! them (a request is pending until an instance starts executing it, the
//! payload Triton's batcher prepared for a busy instance included).
//!
//! The scheduler's source calls [`InstanceLoad::take`] for each batch it
//! hands out, the instance runner [`InstanceLoad::ended`] when the batch
//! ended; both are a compare-and-swap on one word. Requests waiting behind
//! a busy instance add up in the model's [`Waiting`] gauge.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
};

/// Requests handed to a model's instances that did not start executing:
/// one gauge per model version, shared by its instances' loads.
#[derive(Debug, Default, Clone)]
pub(crate) struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    /// Requests waiting in instances now.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a batcher does when a busy instance frees (see
/// [`InstanceLoad::wake_when_free`]).
type Wake = Box<dyn Fn() + Send + Sync>;

/// One instance's unfinished batches.
pub(crate) struct InstanceLoad {
    /// Batches handed and not ended (high half) and the requests of those
    /// waiting behind the one executing (low half).
    state: AtomicU64,
    waiting: Waiting,
    wake: Option<Wake>,
    wants_wake: AtomicBool,
}

impl std::fmt::Debug for InstanceLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (batches, behind) = split(self.state.load(Ordering::SeqCst));
        f.debug_struct("InstanceLoad")
            .field("batches", &batches)
            .field("behind", &behind)
            .finish_non_exhaustive()
    }
}

fn split(state: u64) -> (u64, u64) {
    (state >> 32, state & u64::from(u32::MAX))
}

fn join(batches: u64, behind: u64) -> u64 {
    (batches << 32) | behind.min(u64::from(u32::MAX))
}

impl InstanceLoad {
    /// The load of one more instance of the model whose gauge is `waiting`;
    /// `wake` (called on the thread that ends a batch) wakes the batcher
    /// waiting for this instance to free.
    pub fn new(waiting: Waiting, wake: Option<Wake>) -> Self {
        Self {
            state: AtomicU64::new(0),
            waiting,
            wake,
            wants_wake: AtomicBool::new(false),
        }
    }

    /// Whether a batch handed to the instance has not ended.
    pub fn is_busy(&self) -> bool {
        split(self.state.load(Ordering::SeqCst)).0 > 0
    }

    /// A batch of `requests` was taken for the instance: it starts at once
    /// when the instance is free, else once the batches before it ended.
    pub fn take(&self, requests: usize) {
        let requests = requests as u64;
        let mut current = self.state.load(Ordering::SeqCst);
        loop {
            let (batches, behind) = split(current);
            let waits = if batches > 0 { requests } else { 0 };
            // Counted before `behind` holds them, so the gauge never reads
            // less than what waits (an ending batch subtracts `behind`).
            self.add(waits);
            let next = join(batches + 1, behind + waits);
            match self.state.compare_exchange_weak(
                current,
                next,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return,
                Err(actual) => {
                    self.subtract(waits);
                    current = actual;
                }
            }
        }
    }

    /// The oldest unfinished batch ended: the batches behind it start (an
    /// instance holds two at most; with more, they count as started together).
    pub fn ended(&self) {
        let update = |state| {
            let (batches, _) = split(state);
            Some(join(batches.saturating_sub(1), 0))
        };
        let Ok(previous) = self
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, update)
        else {
            return;
        };
        let (batches, behind) = split(previous);
        self.subtract(behind);
        if batches <= 1
            && let Some(wake) = &self.wake
            && self.wants_wake.swap(false, Ordering::SeqCst)
        {
            wake();
        }
    }

    /// Asks for the wake given to [`Self::new`] when the instance frees.
    /// Call it holding the lock the wake takes, then check [`Self::is_busy`]
    /// before waiting: a batch ending in between then wakes the waiter.
    pub fn wake_when_free(&self) {
        self.wants_wake.store(true, Ordering::SeqCst);
    }

    fn add(&self, requests: u64) {
        if requests > 0 {
            self.waiting
                .0
                .fetch_add(requests as usize, Ordering::SeqCst);
        }
    }

    fn subtract(&self, requests: u64) {
        if requests > 0 {
            self.waiting
                .0
                .fetch_sub(requests as usize, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_batch_for_a_free_instance_starts_at_once() {
        let waiting = Waiting::default();
        let load = InstanceLoad::new(waiting.clone(), None);
        assert!(!load.is_busy());
        load.take(3);
        assert!(load.is_busy());
        assert_eq!(waiting.get(), 0);
        load.ended();
        assert!(!load.is_busy());
        assert_eq!(waiting.get(), 0);
    }

    #[test]
    fn a_batch_behind_a_busy_one_waits_until_it_ends() {
        let waiting = Waiting::default();
        let first = InstanceLoad::new(waiting.clone(), None);
        let second = InstanceLoad::new(waiting.clone(), None);
        first.take(1);
        first.take(4);
        second.take(2);
        second.take(3);
        assert_eq!(waiting.get(), 7, "the model's gauge adds its instances'");
        first.ended();
        assert_eq!(waiting.get(), 3, "the second batch started");
        assert!(first.is_busy());
        first.ended();
        assert!(!first.is_busy());
        second.ended();
        second.ended();
        assert_eq!(waiting.get(), 0);
    }

    #[test]
    fn the_wake_comes_once_the_instance_is_free() {
        let woken = Arc::new(AtomicUsize::new(0));
        let counter = woken.clone();
        let wake: Wake = Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let load = InstanceLoad::new(Waiting::default(), Some(wake));
        load.take(1);
        load.take(1);
        load.wake_when_free();
        load.ended();
        assert_eq!(woken.load(Ordering::SeqCst), 0, "still busy");
        load.ended();
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        load.take(1);
        load.ended();
        assert_eq!(woken.load(Ordering::SeqCst), 1, "nobody asked again");
    }
}
