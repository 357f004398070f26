//! The dynamic batcher's decisions, free of threads and clocks: every call
//! gets the current time. A free instance asks [`State::next`] for work and
//! gets a batch, or the time to ask again.
//!
//! Requests join a batch in queue order (by priority level), and
//! [`BatchRules`] cut it.

use std::time::Instant;

use oxiserve_config::BatchPlan;
use oxiserve_proto::inference::ModelDynamicBatching;

use super::queue::{Meta, PriorityQueues, Refusal, Removed};
use crate::scheduler::batch_rules::{BatchRules, Cut};

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

impl<T: Cancellable> State<T> {
    pub fn new(config: &ModelDynamicBatching, batch: BatchPlan) -> Self {
        Self {
            rules: BatchRules::new(
                &config.preferred_batch_size,
                config.max_queue_delay_microseconds,
                batch,
            ),
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
        let entries = self
            .queues
            .iter()
            .map(|e| (e.batch_size, e.enqueued, &e.key));
        let scan = self.rules.scan(entries);
        match self.rules.cut(&scan, now, self.stopped) {
            Cut::Take(count) => self.take(count),
            Cut::WaitUntil(wake) => {
                let deadline = self.queues.next_deadline();
                Next::WaitUntil(deadline.map_or(wake, |d| wake.min(d)))
            }
        }
    }

    fn take(&mut self, count: usize) -> Next<T> {
        let batch = self.queues.take(count);
        Next::Batch(batch.into_iter().map(|e| e.item).collect())
    }
}

#[cfg(test)]
mod tests;
