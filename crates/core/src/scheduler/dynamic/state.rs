//! The dynamic batcher's decisions, free of threads and clocks: every call
//! gets the current time. A free instance asks [`State::next`] for work and
//! gets a batch, or the time to ask again.
//!
//! The rules are Triton's: requests join the batch in queue order (by
//! priority level) while the batch stays within `max_batch_size` and their
//! shapes agree; a batch reaching a preferred size goes at once (the largest
//! one reachable wins); otherwise the batch waits for more requests until its
//! oldest request waited `max_queue_delay_microseconds` (0 = no waiting).

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use oxiserve_proto::inference::ModelDynamicBatching;

use super::queue::{Meta, PriorityQueues, Refusal, Removed};

/// The batch-size rules of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchRules {
    pub max_batch_size: u64,
    pub preferred: BTreeSet<u64>,
    pub max_queue_delay: Duration,
}

impl BatchRules {
    /// The rules of `config` for a model with `max_batch_size` (0 counts as 1).
    /// Without preferred sizes (a configuration not normalized), the
    /// largest batch is the preferred one, as normalization would say.
    pub fn new(config: &ModelDynamicBatching, max_batch_size: i32) -> Self {
        let max_batch_size = u64::try_from(max_batch_size).unwrap_or(0).max(1);
        let mut preferred: BTreeSet<u64> = config
            .preferred_batch_size
            .iter()
            .filter_map(|s| u64::try_from(*s).ok())
            .filter(|s| *s > 0)
            .collect();
        if preferred.is_empty() {
            preferred.insert(max_batch_size);
        }
        Self {
            max_batch_size,
            preferred,
            max_queue_delay: Duration::from_micros(config.max_queue_delay_microseconds),
        }
    }

    fn max_preferred(&self) -> u64 {
        self.preferred.last().copied().unwrap_or(0)
    }
}

/// What a free instance does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next<T> {
    /// Execute these requests together.
    Batch(Vec<T>),
    /// Ask again at this time (or when a request arrives).
    WaitUntil(Instant),
    /// Nothing queued: ask again when a request arrives.
    WaitForRequests,
    /// Stopped and drained: the instance may end.
    Stopped,
}

/// One decision, with the requests the queue policies removed on the way.
#[derive(Debug)]
pub(crate) struct Step<T> {
    pub next: Next<T>,
    pub removed: Removed<T>,
}

/// Whether a queued item was cancelled by its client.
pub(crate) trait Cancellable {
    fn is_cancelled(&self) -> bool;
}

/// The batcher's queues and rules.
#[derive(Debug)]
pub(crate) struct State<T> {
    rules: BatchRules,
    queues: PriorityQueues<T>,
    stopped: bool,
}

/// How far the scan of the queue got.
struct Scan {
    /// Requests that fit in one batch, in queue order.
    count: usize,
    size: u64,
    /// The best cut, in requests: the largest preferred size reached, or
    /// where the next request would pass the largest preferred size.
    best: Option<usize>,
    /// The next request cannot join (too big or another shape).
    full: bool,
    oldest: Option<Instant>,
}

impl<T: Cancellable> State<T> {
    pub fn new(config: &ModelDynamicBatching, max_batch_size: i32) -> Self {
        Self {
            rules: BatchRules::new(config, max_batch_size),
            queues: PriorityQueues::new(config),
            stopped: false,
        }
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Queues a request arriving at `now`, or says why not.
    pub fn enqueue(&mut self, item: T, meta: Meta, now: Instant) -> Result<(), (T, Refusal)> {
        if self.stopped {
            return Err((item, Refusal::Stopped));
        }
        self.queues.push(item, meta, now)
    }

    /// Whether [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Refuses new requests; the queued ones still execute, without waiting
    /// for more.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Applies the queue policies at `now` without forming a batch (for a
    /// timer while every instance is busy).
    pub fn expire(&mut self, now: Instant) -> Removed<T> {
        self.queues.expire(now, T::is_cancelled)
    }

    /// The earliest time a queued request's timeout passes.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.queues.next_deadline()
    }

    /// What a free instance does at `now`.
    pub fn next(&mut self, now: Instant) -> Step<T> {
        let removed = self.expire(now);
        let next = self.decide(now);
        Step { next, removed }
    }

    fn decide(&mut self, now: Instant) -> Next<T> {
        if self.queues.len() == 0 {
            return if self.stopped {
                Next::Stopped
            } else {
                Next::WaitForRequests
            };
        }
        let scan = self.scan();
        let max_delay = self.rules.max_queue_delay;
        let oldest = scan.oldest.unwrap_or(now);
        let waited = now.saturating_duration_since(oldest);
        let delay_passed = !max_delay.is_zero() && waited >= max_delay;
        if let Some(best) = scan.best
            && !delay_passed
        {
            return self.take(best);
        }
        if scan.full
            || scan.size >= self.rules.max_preferred()
            || delay_passed
            || max_delay.is_zero()
            || self.stopped
        {
            return self.take(scan.count);
        }
        let mut wake = oldest + max_delay;
        if let Some(deadline) = self.queues.next_deadline() {
            wake = wake.min(deadline);
        }
        Next::WaitUntil(wake)
    }

    /// Walks the queue as far as one batch can reach.
    fn scan(&self) -> Scan {
        let max_preferred = self.rules.max_preferred();
        let mut scan = Scan {
            count: 0,
            size: 0,
            best: None,
            full: false,
            oldest: None,
        };
        let mut key = None;
        for entry in self.queues.iter() {
            if scan.count > 0 {
                let grown = scan.size + entry.batch_size;
                if grown > max_preferred && scan.best.is_none() {
                    scan.best = Some(scan.count);
                }
                if grown > self.rules.max_batch_size || key != Some(&entry.key) {
                    scan.full = true;
                    break;
                }
            }
            key.get_or_insert(&entry.key);
            scan.count += 1;
            scan.size += entry.batch_size;
            scan.oldest = Some(
                scan.oldest
                    .map_or(entry.enqueued, |o| o.min(entry.enqueued)),
            );
            if self.rules.preferred.contains(&scan.size) {
                scan.best = Some(scan.count);
            }
        }
        scan
    }

    fn take(&mut self, count: usize) -> Next<T> {
        let batch = self.queues.take(count);
        Next::Batch(batch.into_iter().map(|e| e.item).collect())
    }
}
