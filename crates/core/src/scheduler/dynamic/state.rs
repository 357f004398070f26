//! The dynamic batcher's decisions, free of threads and clocks: every call
//! gets the current time. A free instance asks [`State::next`] for work and
//! gets a batch, or the time to ask again.
//!
//! Requests join a batch in queue order (by priority level), and
//! [`BatchRules`] cut it. An instance still busy with a batch (a backend that
//! pipelines) gets the next one only once it cannot grow any more, as
//! Triton's batcher keeps adding requests to the payload it prepared for a
//! busy instance until the payload is full; and none at all where a queue
//! policy limits or times the queue, or priority levels order it (Triton
//! prepares no payload ahead then).

use std::time::Instant;

use oxiserve_config::BatchPlan;
use oxiserve_proto::inference::{ModelDynamicBatching, ModelQueuePolicy};

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
    /// Whether a busy instance may take a batch that cannot grow.
    prefetch: bool,
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
            prefetch: prefetches(config),
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

    /// What an instance does at `now`; `busy`: it still executes a batch.
    pub fn next(&mut self, now: Instant, busy: bool) -> Step<T> {
        let removed = self.expire(now);
        let next = self.decide(now, busy);
        Step { next, removed }
    }

    fn decide(&mut self, now: Instant, busy: bool) -> Next<T> {
        if self.queues.len() == 0 {
            return if self.stopped {
                Next::Stopped
            } else {
                Next::WaitForRequests
            };
        }
        // Once stopped, busy instances help drain the queue.
        let ahead = busy && !self.stopped;
        if ahead && !self.prefetch {
            return Next::WaitForRequests;
        }
        let entries = self
            .queues
            .iter()
            .map(|e| (e.batch_size, e.enqueued, &e.key));
        let scan = self.rules.scan(entries);
        if ahead && !self.rules.saturated(&scan) {
            return Next::WaitForRequests;
        }
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

/// Whether a busy instance may be handed a batch ahead: Triton prepares one
/// only without priority levels and with a default queue policy that
/// neither limits the queue nor times its requests.
fn prefetches(config: &ModelDynamicBatching) -> bool {
    let free = |p: &ModelQueuePolicy| {
        p.max_queue_size == 0 && p.default_timeout_microseconds == 0 && !p.allow_timeout_override
    };
    config.priority_levels == 0 && config.default_queue_policy.as_ref().is_none_or(free)
}

#[cfg(test)]
mod tests;
