//! What schedulers hand instances: jobs (requests waiting to execute) and
//! the sources instance runners take their batches from.

use std::{sync::Arc, time::Instant};

use oxiserve_backend::BackendRequest;

use crate::stats::RequestRecord;

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
