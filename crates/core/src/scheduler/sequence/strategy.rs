//! The scheduling strategy a sequence batcher's configuration asks for:
//! direct ([`State`]) or oldest ([`OldestState`]), behind one face.

use std::time::{Duration, Instant};

use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelSequenceBatching, model_sequence_batching::StrategyChoice},
};

use super::{
    oldest::OldestState,
    state::{CorrId, Flags, Next, Refusal, State},
};
use crate::scheduler::{
    Job,
    batch_rules::BatchRules,
    dynamic::{BatchKey, ShapeRule},
};

/// One model version's sequence slots and how its batches form.
#[derive(Debug)]
pub(super) enum Strategy {
    Direct(State<Job>),
    Oldest {
        state: OldestState<Job, BatchKey>,
        /// Which requests may share a batch.
        shapes: ShapeRule,
    },
}

impl Strategy {
    /// The strategy of `batching`; a sequence loses its slot after `idle`.
    pub fn new(config: &ModelConfig, batching: &ModelSequenceBatching, idle: Duration) -> Self {
        let batch = BatchPlan::of(config);
        let max_batch_size = usize::try_from(batch.max_batch()).unwrap_or(usize::MAX);
        match &batching.strategy_choice {
            Some(StrategyChoice::Oldest(oldest)) => {
                let candidates = match usize::try_from(oldest.max_candidate_sequences) {
                    Ok(n) if n > 0 => n,
                    _ => max_batch_size,
                };
                let rules = BatchRules::new(
                    &oldest.preferred_batch_size,
                    oldest.max_queue_delay_microseconds,
                    batch,
                );
                Self::Oldest {
                    state: OldestState::new(candidates, idle, rules),
                    shapes: ShapeRule::new(config, &[]),
                }
            }
            _ => Self::Direct(State::new(max_batch_size, idle)),
        }
    }

    /// Whether each request taken must report its completion
    /// ([`Self::complete`]) before its sequence's next request may go.
    pub fn awaits_completion(&self) -> bool {
        matches!(self, Self::Oldest { .. })
    }

    /// Adds an instance with its slots; returns its index.
    pub fn add_instance(&mut self) -> usize {
        match self {
            Self::Direct(state) => state.add_instance(),
            Self::Oldest { state, .. } => state.add_instance(),
        }
    }

    /// Requests queued and not yet taken.
    pub fn len(&self) -> usize {
        match self {
            Self::Direct(state) => state.len(),
            Self::Oldest { state, .. } => state.len(),
        }
    }

    /// Sequences in progress: holding a slot (not ended) or in the backlog.
    pub fn sequences(&self) -> usize {
        match self {
            Self::Direct(state) => state.sequences(),
            Self::Oldest { state, .. } => state.sequences(),
        }
    }

    /// Gives `instance` no new sequence (an instance update removes it).
    pub fn retire_instance(&mut self, instance: usize) {
        match self {
            Self::Direct(state) => state.retire_instance(instance),
            Self::Oldest { state, .. } => state.retire_instance(instance),
        }
    }

    /// Whether a sequence holds a slot of `instance`.
    pub fn holds_sequences(&self, instance: usize) -> bool {
        match self {
            Self::Direct(state) => state.holds_sequences(instance),
            Self::Oldest { state, .. } => state.holds_sequences(instance),
        }
    }

    /// Refuses new requests; the queued ones still execute.
    pub fn stop(&mut self) {
        match self {
            Self::Direct(state) => state.stop(),
            Self::Oldest { state, .. } => state.stop(),
        }
    }

    /// Queues a request of sequence `corrid`, or says why not (handing the
    /// request back, boxed).
    pub fn enqueue(
        &mut self,
        job: Job,
        corrid: CorrId,
        flags: Flags,
        now: Instant,
    ) -> Result<(), (Box<Job>, Refusal)> {
        let queued = match self {
            Self::Direct(state) => state.enqueue(job, corrid, flags, now),
            Self::Oldest { state, shapes } => {
                let key = shapes.key(&job.request.request);
                state.enqueue(job, key, corrid, flags, now)
            }
        };
        queued.map_err(|(job, refusal)| (Box::new(job), refusal))
    }

    /// What free instance `instance` does at `now`.
    pub fn next(&mut self, instance: usize, now: Instant) -> Next<Job> {
        match self {
            Self::Direct(state) => state.next(instance, now),
            Self::Oldest { state, .. } => state.next(instance, now),
        }
    }

    /// Ends sequence `corrid` as its END request would (an iterative
    /// sequence's request was released for good).
    pub fn end(&mut self, corrid: &CorrId) {
        match self {
            Self::Direct(state) => state.end(corrid),
            Self::Oldest { state, .. } => state.end(corrid),
        }
    }

    /// Whether [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        match self {
            Self::Direct(state) => state.is_stopped(),
            Self::Oldest { state, .. } => state.is_stopped(),
        }
    }

    /// Gives up the backlogged sequences whose time ran out at `now`;
    /// returns their requests, to be rejected.
    pub fn expire(&mut self, now: Instant) -> Vec<Job> {
        match self {
            Self::Direct(state) => state.expire(now),
            Self::Oldest { state, .. } => state.expire(now),
        }
    }

    /// The earliest time a backlogged sequence expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        match self {
            Self::Direct(state) => state.next_expiry(),
            Self::Oldest { state, .. } => state.next_expiry(),
        }
    }

    /// The request `instance` took from `slot` completed at `now`.
    pub fn complete(&mut self, instance: usize, slot: usize, now: Instant) {
        if let Self::Oldest { state, .. } = self {
            state.complete(instance, slot, now);
        }
    }
}
