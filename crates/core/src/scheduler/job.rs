//! What schedulers hand instances: jobs (requests waiting to execute) and
//! the sources instance runners take their batches from.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use crossbeam_channel::{Receiver, Sender};
use oxiserve_backend::BackendRequest;

use super::InstanceLoad;
use crate::{infer::RequestTrace, stats::RequestRecord};

/// A request waiting to execute.
#[derive(Debug)]
pub(crate) struct Job {
    pub request: BackendRequest,
    pub record: Arc<RequestRecord>,
    pub batch_size: u64,
    pub enqueued: Instant,
    /// The request's trace, if it is traced.
    pub trace: Option<Arc<RequestTrace>>,
}

/// Where an instance runner takes its next batch from.
pub(crate) trait BatchSource: Send {
    /// The next batch to execute; `None` when the scheduler stopped and its
    /// queue is drained.
    fn next_batch(&mut self) -> Option<Vec<Job>>;

    /// The instance's load: the source takes each batch it hands out there,
    /// the runner ends it there.
    fn load(&self) -> Arc<InstanceLoad>;
}

/// Asks one instance's source for no more batches (an instance update
/// removes the instance): once set, the source's next `next_batch` answers
/// `None`. A source waiting on a queue also waits on [`Retired::wake`]; one
/// waiting on a condition variable is woken by its scheduler's `wake_idle`.
#[derive(Debug, Clone)]
pub(crate) struct Retired {
    flag: Arc<AtomicBool>,
    wake: (Sender<()>, Receiver<()>),
}

impl Default for Retired {
    fn default() -> Self {
        Self {
            flag: Arc::default(),
            wake: crossbeam_channel::bounded(1),
        }
    }
}

impl Retired {
    /// Retires the source, and wakes it if it waits on [`Retired::wake`].
    pub fn set(&self) {
        self.flag.store(true, Ordering::Relaxed);
        let _ = self.wake.0.try_send(());
    }

    /// Whether the source is retired.
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Ready once the source is retired.
    pub fn wake(&self) -> &Receiver<()> {
        &self.wake.1
    }
}
