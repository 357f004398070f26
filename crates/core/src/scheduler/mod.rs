//! Schedulers: how queued requests become batches for the model's instances.
//! The default scheduler sends each request to the next free instance,
//! alone; the dynamic batcher forms batches. Both hand instances their work
//! as [`BatchSource`]s; so does the sequence batcher, which keeps each
//! sequence's requests on one instance slot. An ensemble's scheduler sends each request through
//! its steps' models instead.

mod batch_rules;
mod default;
mod dynamic;
mod ensemble;
mod execution;
mod idle_polling;
mod inline;
mod job;
mod load;
mod runner;
mod sequence;

use std::path::Path;

use oxiserve_backend::ResponseTarget;
use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};
use oxiserve_types::Result;

pub(crate) use default::DefaultScheduler;
pub(crate) use dynamic::DynamicBatcher;
pub(crate) use ensemble::{EnsembleScheduler, StepHost};
pub(crate) use inline::{InlineInstances, SharedInstance};
pub(crate) use job::{BatchSource, Job, Retired};
pub(crate) use load::{InstanceLoad, Waiting};
pub(crate) use runner::{InstanceRunner, RunnerSpec};
pub(crate) use sequence::SequenceBatcher;

/// The scheduler a model's configuration asks for.
#[derive(Debug)]
pub(crate) enum Scheduler {
    Default(DefaultScheduler),
    Dynamic(DynamicBatcher),
    Ensemble(EnsembleScheduler),
    Sequence(SequenceBatcher),
}

impl Scheduler {
    /// The dynamic batcher with `dynamic_batching`, the sequence batcher
    /// with `sequence_batching`, else the default scheduler.
    /// `model_path` is the model's folder (for sequence initial state files).
    pub fn for_config(config: &ModelConfig, model_path: &Path) -> Result<Self> {
        Ok(match &config.scheduling_choice {
            Some(SchedulingChoice::DynamicBatching(batching)) => {
                Self::Dynamic(DynamicBatcher::new(config, batching)?)
            }
            Some(SchedulingChoice::SequenceBatching(batching)) => {
                Self::Sequence(SequenceBatcher::new(config, batching, model_path)?)
            }
            _ => Self::Default(DefaultScheduler::new()),
        })
    }

    /// The target a request's responses go through (see
    /// [`DynamicBatcher::wrap_target`]).
    pub fn wrap_target(&self, target: Box<dyn ResponseTarget>) -> Box<dyn ResponseTarget> {
        match self {
            Self::Default(_) | Self::Ensemble(_) | Self::Sequence(_) => target,
            Self::Dynamic(d) => d.wrap_target(target),
        }
    }

    /// Queues a request.
    pub fn enqueue(&self, job: Job) -> Result<()> {
        match self {
            Self::Default(d) => d.enqueue(job),
            Self::Dynamic(d) => d.enqueue(job),
            Self::Ensemble(e) => e.enqueue(job),
            Self::Sequence(s) => s.enqueue(job),
        }
    }

    /// Requests queued, or handed to an instance that did not start them:
    /// Triton's pending requests.
    pub fn pending(&self) -> usize {
        match self {
            Self::Default(d) => d.pending(),
            Self::Dynamic(d) => d.pending(),
            Self::Sequence(s) => s.pending(),
            // Its requests wait in their steps' models.
            Self::Ensemble(_) => 0,
        }
    }

    /// Triton's in-flight inferences: the requests queued; with the
    /// sequence batcher, also the sequences in progress; with an ensemble,
    /// the requests going through its steps.
    pub fn in_flight(&self) -> usize {
        match self {
            Self::Sequence(s) => s.pending() + s.active_sequences(),
            Self::Ensemble(e) => e.in_flight(),
            Self::Default(_) | Self::Dynamic(_) => self.pending(),
        }
    }

    /// Accepts no more requests; instances finish what is queued, then stop.
    pub fn stop(&self) {
        match self {
            Self::Default(d) => d.stop(),
            Self::Dynamic(d) => d.stop(),
            Self::Ensemble(e) => e.stop(),
            Self::Sequence(s) => s.stop(),
        }
    }

    /// A source for one more instance runner; `retired` stops it where
    /// [`Scheduler::can_retire_instances`].
    pub fn source(&self, retired: Retired) -> Box<dyn BatchSource> {
        match self {
            Self::Default(d) => d.source(retired),
            Self::Dynamic(d) => d.source(retired),
            Self::Ensemble(e) => e.source(),
            Self::Sequence(s) => s.source(retired),
        }
    }

    /// Where admitting threads may execute on idle instances: the default
    /// scheduler's (the batchers form batches; an ensemble has no instances).
    pub fn inline_instances(&self) -> Option<InlineInstances> {
        match self {
            Self::Default(d) => Some(d.inline_instances()),
            Self::Dynamic(_) | Self::Ensemble(_) | Self::Sequence(_) => None,
        }
    }

    /// Whether single instances can leave while the others serve (an
    /// ensemble has no instances).
    pub fn can_retire_instances(&self) -> bool {
        !matches!(self, Self::Ensemble(_))
    }

    /// Whether a retired instance goes on until the sequences it holds end
    /// (the sequence batcher), rather than after the batch it executes.
    pub fn retiring_outlives_update(&self) -> bool {
        matches!(self, Self::Sequence(_))
    }

    /// Wakes the instances that wait for work, so that a retired one sees it.
    pub fn wake_idle(&self) {
        match self {
            Self::Dynamic(d) => d.wake_idle(),
            Self::Sequence(s) => s.wake_idle(),
            Self::Default(_) | Self::Ensemble(_) => {}
        }
    }
}
