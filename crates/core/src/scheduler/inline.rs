//! Inline execution. A model whose instances' `execute` is short and never
//! blocks ([`Model::executes_inline`], the identity backend's) runs a request
//! on the thread that admitted it, while one of its instances is idle and
//! nothing is queued, instead of handing it to the instance's thread. That
//! saves the queue, the instance thread's polling and its wake-up: the
//! largest cost a bare server does not pay (docs/design/request-path.md).
//! The instance thread still executes what finds every instance busy, and an
//! instance whose thread took a batch from the queue is busy until that batch
//! ends, so that a later request does not overtake it.
//!
//! [`Model::executes_inline`]: oxiserve_backend::Model::executes_inline

use std::sync::Arc;

use oxiserve_backend::ModelInstance;
use parking_lot::{Mutex, RwLock};

use super::{InstanceLoad, Job, execution::execute};
use crate::{rate_limiter::Permit, stats::StatsCollector};

/// One instance, shared by its own thread and the admitting threads; one
/// of them executes on it at a time. Its thread takes it back to drop it.
pub(crate) struct SharedInstance {
    /// `None` once its thread took it back.
    instance: Mutex<Option<Box<dyn ModelInstance>>>,
    stats: Arc<StatsCollector>,
    /// `<model> (version <v>)`, for log lines.
    label: String,
    load: Arc<InstanceLoad>,
}

impl SharedInstance {
    pub fn new(
        instance: Box<dyn ModelInstance>,
        stats: Arc<StatsCollector>,
        label: String,
        load: Arc<InstanceLoad>,
    ) -> Arc<Self> {
        Arc::new(Self {
            instance: Mutex::new(Some(instance)),
            stats,
            label,
            load,
        })
    }

    /// Executes a batch its scheduler's source handed out (and took on the
    /// instance's load), once no admitting thread executes on it.
    pub fn execute(&self, batch: Vec<Job>, permit: Option<Permit>) {
        let mut instance = self.instance.lock();
        let Some(instance) = instance.as_mut() else {
            return;
        };
        execute(
            instance.as_mut(),
            batch,
            &self.stats,
            &self.label,
            &self.load,
            permit,
        );
    }

    /// Executes `job` now if no other thread executes on the instance, it
    /// holds no batch and it is ready inline; gives it back otherwise.
    fn try_execute(&self, job: Job) -> Option<Job> {
        let Some(mut instance) = self.instance.try_lock() else {
            return Some(job);
        };
        let Some(instance) = instance.as_mut() else {
            return Some(job);
        };
        // A batch its thread took (and may not have started) goes first:
        // requests of one client keep their order.
        if self.load.is_busy() || !instance.ready_inline() {
            return Some(job);
        }
        self.load.take(1);
        execute(
            instance.as_mut(),
            vec![job],
            &self.stats,
            &self.label,
            &self.load,
            None,
        );
        None
    }

    /// The instance, taken back by its own thread once no other thread
    /// executes on it; later executions find none.
    pub fn take(&self) -> Option<Box<dyn ModelInstance>> {
        self.instance.lock().take()
    }
}

/// The instances of one model version that admitting threads may execute on.
#[derive(Clone, Default)]
pub(crate) struct InlineInstances(Arc<RwLock<Vec<Arc<SharedInstance>>>>);

impl std::fmt::Debug for InlineInstances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("InlineInstances")
            .field(&self.0.read().len())
            .finish()
    }
}

impl InlineInstances {
    /// Lets admitting threads execute on `instance` until it is withdrawn.
    pub fn offer(&self, instance: &Arc<SharedInstance>) {
        self.0.write().push(instance.clone());
    }

    /// Stops offering `instance`: admitting threads no longer find it.
    pub fn withdraw(&self, instance: &Arc<SharedInstance>) {
        self.0.write().retain(|i| !Arc::ptr_eq(i, instance));
    }

    /// Executes `job` on an idle instance, on this thread; gives it back
    /// when every instance is busy. The list is not held while the job
    /// executes: its responses may submit an ensemble's next step here.
    pub fn try_execute(&self, job: Job) -> Option<Job> {
        let idle = self
            .0
            .read()
            .iter()
            .find(|i| !i.instance.is_locked())
            .cloned();
        match idle {
            Some(instance) => instance.try_execute(job),
            None => Some(job),
        }
    }
}
