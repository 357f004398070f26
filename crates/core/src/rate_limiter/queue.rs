//! The staged instances: those with a batch to execute, waiting for their
//! resources, in the order the rate limiter serves them.

use std::collections::BTreeSet;

/// A registered instance's number.
pub(super) type InstanceId = u64;

/// Staged instances, the one with the smallest scaled priority (executions
/// times priority, Triton's "execution_count" order) first; among equals,
/// the one staged first.
#[derive(Debug, Default)]
pub(super) struct StagedQueue {
    order: BTreeSet<(u64, u64, InstanceId)>,
    next_seq: u64,
}

/// Where an instance stands in the queue, to take it out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place(u64, u64, InstanceId);

impl StagedQueue {
    /// Queues `id` with `scaled` priority.
    pub fn push(&mut self, id: InstanceId, scaled: u64) -> Place {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.order.insert((scaled, seq, id));
        Place(scaled, seq, id)
    }

    /// The instance served next.
    pub fn head(&self) -> Option<InstanceId> {
        self.order.first().map(|&(_, _, id)| id)
    }

    /// Takes the head out.
    pub fn pop(&mut self) {
        self.order.pop_first();
    }

    /// Takes the instance at `place` out.
    pub fn remove(&mut self, place: Place) {
        self.order.remove(&(place.0, place.1, place.2));
    }
}
