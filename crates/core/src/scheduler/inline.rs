//! Inline execution. A model whose instances' `execute` is short and never
//! blocks ([`Model::executes_inline`], the identity backend's) runs a request
//! on the thread that admitted it, while one of its instances is idle and
//! nothing is queued, instead of handing it to the instance's thread. That
//! saves the queue, the instance thread's polling and its wake-up: the
//! largest cost a bare server does not pay (docs/design/request-path.md).
//! A request that finds every instance busy waits briefly for one
//! ([`BUSY_WAIT`]); the instance thread executes what still finds them busy,
//! and an instance whose thread took a batch from the queue is busy until
//! that batch ends, so that a later request does not overtake it.
//!
//! [`Model::executes_inline`]: oxiserve_backend::Model::executes_inline

use std::{cell::Cell, sync::Arc, time::Duration};

use oxiserve_backend::ModelInstance;
use parking_lot::{Mutex, RwLock};

use super::{InstanceLoad, Job, execution::execute};
use crate::{rate_limiter::Permit, stats::StatsCollector};

/// How long an admitting thread waits for a busy instance before it queues
/// the request: an inline execution takes microseconds, and waiting keeps the
/// request and its response on this thread, where a hand-off to the
/// instance thread costs more than the wait (docs/design/request-path.md).
const BUSY_WAIT: Duration = Duration::from_micros(50);

thread_local! {
    /// Whether this thread is executing on an instance: a request submitted
    /// from inside that execution (an ensemble's next step) must not wait for
    /// the instance this thread holds.
    static EXECUTING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread marked as executing on an instance.
fn executing<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EXECUTING.set(self.0);
        }
    }
    let _restore = Restore(EXECUTING.replace(true));
    f()
}

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
        executing(|| {
            execute(
                instance.as_mut(),
                batch,
                &self.stats,
                &self.label,
                &self.load,
                permit,
            );
        });
    }

    /// Executes `job` now if no other thread executes on the instance (or
    /// it comes free within `wait`), it holds no batch and it is ready
    /// inline; gives it back otherwise.
    fn try_execute(&self, job: Job, wait: Option<Duration>) -> Option<Job> {
        let locked = match wait {
            Some(wait) => self.instance.try_lock_for(wait),
            None => self.instance.try_lock(),
        };
        let Some(mut instance) = locked else {
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
        executing(|| {
            execute(
                instance.as_mut(),
                vec![job],
                &self.stats,
                &self.label,
                &self.load,
                None,
            );
        });
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

    /// Executes `job` on an idle instance, on this thread, waiting up to
    /// [`BUSY_WAIT`] for a busy one; gives it back when none comes free (or
    /// this thread already executes inline). Every idle instance is tried in
    /// turn: one may hold a batch its process still executes (a Python
    /// process pipelines, and may be waiting for this very request, a BLS
    /// call of its own model) while another is free. The list is not held
    /// while the job executes: its responses may submit an ensemble's next
    /// step here.
    pub fn try_execute(&self, mut job: Job) -> Option<Job> {
        let mut found_idle = false;
        for i in 0.. {
            let Some(instance) = self.0.read().get(i).cloned() else {
                break;
            };
            if instance.instance.is_locked() {
                continue;
            }
            found_idle = true;
            match instance.try_execute(job, None) {
                None => return None,
                Some(refused) => job = refused,
            }
        }
        if found_idle || EXECUTING.get() {
            return Some(job);
        }
        let busy = self.0.read().first().cloned();
        match busy {
            Some(busy) => busy.try_execute(job, Some(BUSY_WAIT)),
            None => Some(job),
        }
    }
}
