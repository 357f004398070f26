//! The oldest strategy's decisions (`sequence_batching { oldest { ... } }`),
//! free of threads and clocks: every call gets the current time.
//!
//! Each instance holds up to `max_candidate_sequences` sequences in its
//! slots (see [`State`]). A free instance batches the next request of each
//! of its sequences that has none in flight, the oldest first (by when each
//! became ready to execute), cut by the [`BatchRules`]: `max_batch_size`,
//! the preferred batch sizes and `max_queue_delay_microseconds`; requests
//! whose shapes differ (their keys) do not share a batch. A batch so holds
//! at most one request per sequence, and a sequence's next request waits
//! until its previous one completed, as in Triton.

use std::time::{Duration, Instant};

use super::state::{CorrId, Dispatch, Flags, Next, Refusal, State};
use crate::scheduler::batch_rules::{BatchRules, Cut};

/// The sequences of every instance and the rules that cut their batches.
/// Items carry a key `K`: only requests with equal keys share a batch.
#[derive(Debug)]
pub(crate) struct OldestState<T, K> {
    slots: State<(T, K)>,
    rules: BatchRules,
}

impl<T, K: PartialEq> OldestState<T, K> {
    /// A state with `max_candidate_sequences` slots (0 counts as 1) per
    /// instance, the idle time after which a sequence loses its slot, and
    /// the batch rules.
    pub fn new(max_candidate_sequences: usize, max_idle: Duration, rules: BatchRules) -> Self {
        Self {
            slots: State::new(max_candidate_sequences, max_idle),
            rules,
        }
    }

    /// Adds an instance with its slots; returns its index.
    pub fn add_instance(&mut self) -> usize {
        self.slots.add_instance()
    }

    /// See [`State::retire_instance`].
    pub fn retire_instance(&mut self, instance: usize) {
        self.slots.retire_instance(instance);
    }

    /// See [`State::holds_sequences`].
    pub fn holds_sequences(&self, instance: usize) -> bool {
        self.slots.holds_sequences(instance)
    }

    /// How many slots were freed so far.
    #[cfg(test)]
    pub fn released(&self) -> u64 {
        self.slots.released()
    }

    /// Requests queued and not yet taken.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Sequences in progress (see [`State::sequences`]).
    pub fn sequences(&self) -> usize {
        self.slots.sequences()
    }

    /// Refuses new requests; the queued ones still execute, without waiting
    /// for more.
    pub fn stop(&mut self) {
        self.slots.stop();
    }

    /// Queues a request of sequence `corrid` with batch key `key`, arriving
    /// at `now`, or says why not.
    pub fn enqueue(
        &mut self,
        item: T,
        key: K,
        corrid: CorrId,
        flags: Flags,
        now: Instant,
    ) -> Result<(), (T, Refusal)> {
        self.slots
            .enqueue((item, key), corrid, flags, now)
            .map_err(|((item, _), refusal)| (item, refusal))
    }

    /// The request that instance `instance` took from slot `slot` completed
    /// at `now`: its sequence's next request may go.
    pub fn complete(&mut self, instance: usize, slot: usize, now: Instant) {
        self.slots.complete((instance, slot), now);
    }

    /// Ends sequence `corrid` (see [`State::end`]).
    pub fn end(&mut self, corrid: &CorrId) {
        self.slots.end(corrid);
    }

    /// Whether [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.slots.is_stopped()
    }

    /// Gives up the backlogged sequences whose time ran out (see
    /// [`State::expire`]); returns their requests.
    pub fn expire(&mut self, now: Instant) -> Vec<T> {
        let expired = self.slots.expire(now);
        expired.into_iter().map(|(item, _)| item).collect()
    }

    /// See [`State::next_expiry`].
    pub fn next_expiry(&self) -> Option<Instant> {
        self.slots.next_expiry()
    }

    /// What free instance `instance` does at `now`.
    pub fn next(&mut self, instance: usize, now: Instant) -> Next<T> {
        self.slots.release_idle(now);
        let mut candidates: Vec<_> = self.slots.candidates(instance).collect();
        candidates.sort_by_key(|c| (c.ready, c.slot));
        let scan = self
            .rules
            .scan(candidates.iter().map(|c| (1, c.ready, &c.item.1)));
        if scan.count == 0 {
            return self.slots.wait(None);
        }
        let count = match self.rules.cut(&scan, now, self.slots.is_stopped()) {
            Cut::Take(count) => count,
            Cut::WaitUntil(at) => return self.slots.wait(Some(at)),
        };
        let chosen: Vec<usize> = candidates[..count].iter().map(|c| c.slot).collect();
        let batch = chosen
            .into_iter()
            .filter_map(|slot| self.slots.take((instance, slot), now, true))
            .map(|d| Dispatch {
                item: d.item.0,
                control: d.control,
                slot: d.slot,
            })
            .collect();
        Next::Batch(batch)
    }
}

#[cfg(test)]
mod tests;
