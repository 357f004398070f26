//! The sequence batcher (`sequence_batching { ... }`): every request of a
//! sequence (one correlation id) executes on the instance slot its first
//! request got, with the control inputs the model declares. With the direct
//! strategy an instance batches the next request of each of its slots; with
//! the oldest strategy it batches the oldest ready requests of its candidate
//! sequences, one per sequence. The decisions live in [`State`] and
//! [`oldest::OldestState`]; this handle feeds them requests and lets each
//! instance take its batches. A sequence waiting in the backlog past its
//! requests' timeout is given up ([`expiry`]).

mod completion;
mod control;
mod expiry;
mod implicit_state;
mod iterative;
mod oldest;
mod shared;
mod state;
mod strategy;

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelSequenceBatching, model_sequence_batching::StrategyChoice},
};
use oxiserve_types::{Error, InferRequest, ParameterValue, Result};
use parking_lot::{Condvar, Mutex};

use self::{
    completion::Completion,
    control::Controls,
    expiry::Reaper,
    implicit_state::ImplicitState,
    iterative::{Ids, Iterative},
    shared::Shared,
    state::{CorrId, Dispatch, Flags, Next, Refusal},
    strategy::Strategy,
};
use super::{BatchSource, InstanceLoad, Job, Retired, Waiting, dynamic::ResponseOrder};

/// Idle time after which a sequence loses its slot when the configuration
/// sets none (Triton's default: one second).
const DEFAULT_IDLE: Duration = Duration::from_secs(1);

/// One model version's sequence batcher.
#[derive(Debug)]
pub(crate) struct SequenceBatcher {
    shared: Arc<Shared>,
    model_name: String,
    /// Requests handed to busy instances, not started yet.
    waiting: Waiting,
    /// With `iterative_sequence`: the ids of requests that come without one.
    iterative: Option<Ids>,
    /// Expires backlogged sequences; started by the first deadline.
    reaper: Reaper,
}

impl SequenceBatcher {
    /// The batcher of `config`'s `sequence_batching`; `model_path` holds
    /// the `initial_state/` files.
    pub fn new(
        config: &ModelConfig,
        batching: &ModelSequenceBatching,
        model_path: &Path,
    ) -> Result<Self> {
        let idle = match batching.max_sequence_idle_microseconds {
            0 => DEFAULT_IDLE,
            us => Duration::from_micros(us),
        };
        let implicit = ImplicitState::new(config, batching, model_path, idle)?;
        let preserve_ordering = matches!(
            &batching.strategy_choice,
            Some(StrategyChoice::Oldest(oldest)) if oldest.preserve_ordering
        );
        Ok(Self {
            shared: Arc::new(Shared {
                state: Mutex::new(Strategy::new(config, batching, idle)),
                work: Condvar::new(),
                expiry: Condvar::new(),
                controls: Controls::new(batching, BatchPlan::of(config))?,
                implicit,
                preserve_ordering,
            }),
            model_name: config.name.clone(),
            waiting: Waiting::default(),
            iterative: batching.iterative_sequence.then(Ids::default),
            reaper: Reaper::default(),
        })
    }

    /// Queues a request of a sequence; refused without a correlation id,
    /// with a batch of more than one, for a sequence that was never started
    /// (or was released, or expired in the backlog), or once the batcher
    /// stopped. Triton's texts.
    pub fn enqueue(&self, mut job: Job) -> Result<()> {
        let model = &self.model_name;
        let checked = self.check(&mut job.request.request, job.batch_size);
        let (corrid, flags) = match checked {
            Ok(found) => found,
            Err(e) => {
                job.record.discard();
                return Err(e);
            }
        };
        if let Some(implicit) = &self.shared.implicit {
            implicit.forget_idle(Instant::now());
            job = with_state_outputs(implicit, job, &corrid, flags.end);
        }
        if self.iterative.is_some() && flags.start {
            job = Iterative::wrap(&self.shared, corrid.clone(), job);
        }
        let mut state = self.shared.lock();
        let refused = state.enqueue(job, corrid.clone(), flags, Instant::now());
        // Only a request with a timeout can bring the backlog a deadline.
        let deadline = flags.timeout.is_some() && state.next_expiry().is_some();
        drop(state);
        match refused {
            Ok(()) => {
                self.shared.work.notify_all();
                if deadline {
                    self.reaper.watch(&self.shared, model);
                }
                Ok(())
            }
            Err((job, refusal)) => {
                job.record.discard();
                Err(match refusal {
                    Refusal::NotStarted => Error::invalid_arg(format!(
                        "inference request for sequence {corrid} to model '{model}' must \
                         specify the START flag on the first request of the sequence"
                    )),
                    Refusal::Stopped => Error::unavailable(
                        "Server is stopping, scheduler for model has stopped accepting new \
                         inference requests",
                    ),
                })
            }
        }
    }

    /// The correlation id and flags of `request` (an iterative sequence's
    /// request without an id gets one, with START).
    fn check(&self, request: &mut InferRequest, batch_size: u64) -> Result<(CorrId, Flags)> {
        let model = &self.model_name;
        if batch_size > 1 {
            return Err(Error::invalid_arg(format!(
                "inference request to model '{model}' must specify batch-size 1 due to \
                 requirements of sequence batcher"
            )));
        }
        let corrid = match (correlation_id(request), &self.iterative) {
            (Some(corrid), _) => corrid,
            (None, Some(ids)) => ids.assign(request),
            (None, None) => {
                return Err(Error::invalid_arg(format!(
                    "inference request to model '{model}' must specify a non-zero or \
                     non-empty correlation ID"
                )));
            }
        };
        let flag = |name| {
            let value = request.parameters.get(name);
            value.and_then(ParameterValue::as_bool).unwrap_or(false)
        };
        // Triton's request timeout, in microseconds; zero is none.
        let timeout = request
            .parameters
            .get("timeout")
            .and_then(ParameterValue::as_u64);
        let flags = Flags {
            start: flag("sequence_start"),
            end: flag("sequence_end"),
            timeout: timeout.filter(|&us| us > 0).map(Duration::from_micros),
        };
        Ok((corrid, flags))
    }

    /// Sequences in progress: holding a slot (not ended) or in the backlog.
    pub fn active_sequences(&self) -> usize {
        self.shared.lock().sequences()
    }

    /// Requests queued, or taken by a busy instance that did not start them.
    pub fn pending(&self) -> usize {
        self.shared.lock().len() + self.waiting.get()
    }

    /// Accepts no more requests; instances execute what is queued (the
    /// backlog expires no more), then stop.
    pub fn stop(&self) {
        self.shared.lock().stop();
        self.shared.work.notify_all();
        self.reaper.join(&self.shared);
    }

    /// A source for one more instance runner, with its own slots.
    pub fn source(&self, retired: Retired) -> Box<dyn BatchSource> {
        let instance = self.shared.lock().add_instance();
        Box::new(SequenceSource {
            shared: self.shared.clone(),
            instance,
            order: self.shared.preserve_ordering.then(ResponseOrder::default),
            load: Arc::new(InstanceLoad::new(self.waiting.clone(), None)),
            retired,
        })
    }

    /// Wakes the instances that wait for work, so that a retired one sees it.
    pub fn wake_idle(&self) {
        self.shared.work.notify_all();
    }
}

impl Drop for SequenceBatcher {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Asks the model for `job`'s state outputs, and routes its responses
/// through the implicit state, which keeps them for the sequence's next request.
fn with_state_outputs(
    implicit: &Arc<ImplicitState>,
    mut job: Job,
    corrid: &CorrId,
    end: bool,
) -> Job {
    let wanted = job.request.requested_outputs.clone();
    for output in implicit.outputs() {
        if !wanted.iter().any(|o| o == output) {
            job.request.requested_outputs.push(output.to_string());
        }
    }
    job.request.sink = job
        .request
        .sink
        .wrap(|target| implicit.capture(corrid.clone(), end, &wanted, target));
    job
}

/// The request's `sequence_id`: a non-zero integer or a non-empty string.
fn correlation_id(request: &InferRequest) -> Option<CorrId> {
    match request.parameters.get("sequence_id")? {
        ParameterValue::String(s) if !s.is_empty() => Some(CorrId::Str(s.clone())),
        // gRPC carries the id as int64: its bits are the unsigned id.
        ParameterValue::Int(i) if *i != 0 => Some(CorrId::Uint(*i as u64)),
        ParameterValue::Uint(u) if *u != 0 => Some(CorrId::Uint(*u)),
        _ => None,
    }
}

/// One instance's view of the batcher.
struct SequenceSource {
    shared: Arc<Shared>,
    instance: usize,
    /// Set with `preserve_ordering`.
    order: Option<ResponseOrder>,
    load: Arc<InstanceLoad>,
    /// Once set, the instance takes no new sequence and stops when the ones
    /// it holds end.
    retired: Retired,
}

impl SequenceSource {
    /// The job of `dispatch`, with its control and state inputs, answering
    /// through a [`Completion`] when the strategy awaits one.
    fn prepare(&self, dispatch: Dispatch<Job>, awaits_completion: bool) -> Job {
        let shared = &self.shared;
        let Dispatch {
            item: mut job,
            control,
            slot,
        } = dispatch;
        job.request
            .request
            .inputs
            .extend(shared.controls.tensors(&control));
        if let Some(implicit) = &shared.implicit {
            let states = implicit.inputs(&control.corrid, control.start);
            job.request.request.inputs.extend(states);
        }
        // An END request's slot is already free: nothing waits for it.
        if awaits_completion && !control.end {
            job.request.sink = job.request.sink.wrap(|inner| {
                Box::new(Completion::new(shared.clone(), self.instance, slot, inner))
            });
        }
        if let Some(order) = &self.order {
            job.request.sink = job.request.sink.wrap(|inner| order.register(inner));
        }
        job
    }
}

impl BatchSource for SequenceSource {
    fn next_batch(&mut self) -> Option<Vec<Job>> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        loop {
            let leaving = self.retired.is_set();
            if leaving {
                state.retire_instance(self.instance);
            }
            let now = Instant::now();
            let next = state.next(self.instance, now);
            if leaving && !matches!(next, Next::Batch(_)) && !state.holds_sequences(self.instance) {
                // Its sequences ended: pass a wake-up meant for work on.
                shared.work.notify_all();
                return None;
            }
            match next {
                Next::Batch(batch) => {
                    self.load.take(batch.len());
                    if state.len() > 0 {
                        // A freed slot may have gone to another instance.
                        shared.work.notify_all();
                    }
                    let awaits_completion = state.awaits_completion();
                    drop(state);
                    let jobs = batch
                        .into_iter()
                        .map(|dispatch| self.prepare(dispatch, awaits_completion))
                        .collect();
                    return Some(jobs);
                }
                Next::Stopped => {
                    shared.work.notify_all();
                    return None;
                }
                Next::WaitForRequests => {
                    shared.work.wait(&mut state);
                }
                Next::WaitUntil(at) => {
                    let timeout = at.saturating_duration_since(now);
                    shared.work.wait_for(&mut state, timeout);
                }
            }
        }
    }

    fn load(&self) -> Arc<InstanceLoad> {
        self.load.clone()
    }
}

#[cfg(test)]
mod tests;
