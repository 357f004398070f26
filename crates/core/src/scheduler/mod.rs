//! Schedulers: how queued requests become batches for the model's instances.
//! This build has the default scheduler (each request to the next free
//! instance, alone); the dynamic and sequence batchers plug in as other
//! [`BatchSource`]s.

mod default;
mod runner;

use std::{sync::Arc, time::Instant};

use oxiserve_backend::BackendRequest;

use crate::stats::RequestRecord;
pub(crate) use default::DefaultScheduler;
pub(crate) use runner::{InstanceRunner, RunnerSpec};

/// A request waiting to execute.
#[derive(Debug)]
pub(crate) struct Job {
    pub request: BackendRequest,
    pub record: Arc<RequestRecord>,
    pub batch_size: u64,
    pub enqueued: Instant,
}

/// Where an instance runner takes its next batch from.
pub(crate) trait BatchSource: Send {
    /// The next batch to execute; `None` when the scheduler stopped and its
    /// queue is drained.
    fn next_batch(&mut self) -> Option<Vec<Job>>;
}
