//! The dynamic batcher (`dynamic_batching { ... }`): requests wait in
//! priority queues and each free instance takes the best batch the
//! [`State`] forms from them. A timer thread applies queue timeouts while
//! every instance is busy.

mod batch_key;
mod buckets;
mod ordering;
mod padding;
mod queue;
mod state;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use oxiserve_backend::ResponseTarget;
use oxiserve_config::BatchPlan;
use oxiserve_proto::{ModelConfig, inference::ModelDynamicBatching};
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::{Condvar, Mutex, MutexGuard};

pub(super) use self::{
    batch_key::{BatchKey, ShapeRule},
    ordering::ResponseOrder,
};
use self::{
    padding::Padding,
    queue::{Meta, Refusal, Removed},
    state::{Cancellable, Next, State},
};
use super::{BatchSource, InstanceLoad, Job, Retired, Waiting};
use crate::stats::FailureReason;

/// One model version's dynamic batcher.
#[derive(Debug)]
pub(crate) struct DynamicBatcher {
    shared: Arc<Shared>,
    rule: ShapeRule,
    /// Set with `preserve_ordering`.
    order: Option<ResponseOrder>,
    timer: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State<Job>>,
    /// Wakes free instances: a request arrived or the batcher stopped.
    work: Condvar,
    /// Instances waiting on `work`, changed under the `state` lock. A new
    /// request wakes one only when some wait: a wake is a syscall, and under
    /// load every instance is busy.
    idle: AtomicUsize,
    /// Wakes instances that still execute a batch and wait for the next
    /// one to fill (see [`State`]): a request arrived, the instance freed
    /// or the batcher stopped.
    ahead: Condvar,
    /// Instances waiting on `ahead`, changed under the `state` lock.
    waiting_ahead: AtomicUsize,
    /// Requests handed to busy instances, not started yet.
    waiting: Waiting,
    /// Wakes the timer: a request arrived or the batcher stopped.
    timer: Condvar,
    /// Whether a timer thread waits on `timer` (a queue policy has a timeout).
    timed: bool,
    /// `batch_padding`: inputs padded to the batch's longest, or to each bucket's.
    padding: Option<Padding>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State<Job>> {
        self.state.lock()
    }

    /// Whether an instance waits for work (call with the `state` lock held).
    fn has_idle(&self) -> bool {
        self.idle.load(Ordering::Relaxed) > 0
    }

    /// Whether a busy instance waits for its next batch (call with the
    /// `state` lock held).
    fn has_waiting_ahead(&self) -> bool {
        self.waiting_ahead.load(Ordering::Relaxed) > 0
    }

    /// Wakes the instances a new or remaining request may concern.
    fn wake_for_requests(&self, idle: bool, ahead: bool) {
        if idle {
            self.work.notify_one();
        }
        if ahead {
            self.ahead.notify_all();
        }
    }

    /// Waits on `ahead` as a busy instance, until a request arrives or its
    /// batch ends (`load` wakes it then).
    fn wait_ahead<'a>(
        &self,
        mut state: MutexGuard<'a, State<Job>>,
        load: &InstanceLoad,
    ) -> MutexGuard<'a, State<Job>> {
        self.waiting_ahead.fetch_add(1, Ordering::Relaxed);
        load.wake_when_free();
        if load.is_busy() {
            self.ahead.wait(&mut state);
        }
        self.waiting_ahead.fetch_sub(1, Ordering::Relaxed);
        state
    }

    /// Waits on `work` as an idle instance, at most `timeout` when given.
    fn wait_for_work<'a>(
        &self,
        mut state: MutexGuard<'a, State<Job>>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State<Job>> {
        self.idle.fetch_add(1, Ordering::Relaxed);
        match timeout {
            None => self.work.wait(&mut state),
            Some(timeout) => {
                self.work.wait_for(&mut state, timeout);
            }
        }
        self.idle.fetch_sub(1, Ordering::Relaxed);
        state
    }
}

impl Cancellable for Job {
    fn is_cancelled(&self) -> bool {
        self.request.sink.is_cancelled()
    }
}

impl DynamicBatcher {
    /// The batcher of `config`'s `dynamic_batching`.
    pub fn new(config: &ModelConfig, batching: &ModelDynamicBatching) -> Result<Self> {
        let padding = Padding::new(config)?;
        let padded = padding
            .as_ref()
            .map(|p| p.inputs.clone())
            .unwrap_or_default();
        let timed = has_timeouts(batching);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(batching, BatchPlan::of(config))),
            work: Condvar::new(),
            idle: AtomicUsize::new(0),
            ahead: Condvar::new(),
            waiting_ahead: AtomicUsize::new(0),
            waiting: Waiting::default(),
            timer: Condvar::new(),
            timed,
            padding,
        });
        let timer = if timed {
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("batcher:{}", config.name))
                .spawn(move || run_timer(&shared))
                .map_err(|e| Error::internal(format!("cannot start a batcher thread: {e}")))?;
            Some(thread)
        } else {
            None
        };
        Ok(Self {
            shared,
            rule: ShapeRule::new(config, &padded),
            order: batching.preserve_ordering.then(ResponseOrder::default),
            timer: Mutex::new(timer),
        })
    }

    /// The target a request's responses go through: in queue order with
    /// `preserve_ordering`, else `target` itself. Called just before
    /// [`Self::enqueue`], in arrival order.
    pub fn wrap_target(&self, target: Box<dyn ResponseTarget>) -> Box<dyn ResponseTarget> {
        match &self.order {
            Some(order) => order.register(target),
            None => target,
        }
    }

    /// Queues a request; refused when its level's queue is full (Triton's
    /// UNAVAILABLE "Exceeds maximum queue size") or the batcher stopped.
    pub fn enqueue(&self, job: Job) -> Result<()> {
        let parameter = |name| {
            let value = job.request.request.parameters.get(name);
            value.and_then(|v| v.as_u64()).unwrap_or(0)
        };
        let meta = Meta {
            batch_size: job.batch_size,
            key: self.rule.key(&job.request.request),
            priority: parameter("priority"),
            timeout_us: parameter("timeout"),
        };
        let mut state = self.shared.lock();
        let refused = state.enqueue(job, meta, Instant::now());
        let idle = self.shared.has_idle();
        let ahead = self.shared.has_waiting_ahead();
        drop(state);
        match refused {
            Ok(()) => {
                self.shared.wake_for_requests(idle, ahead);
                if self.shared.timed {
                    self.shared.timer.notify_one();
                }
                Ok(())
            }
            Err((job, refusal)) => {
                // Refused before it was queued: not counted, as in Triton.
                job.record.discard();
                Err(refusal_error(&job.request.request.id, refusal))
            }
        }
    }

    /// Requests queued, or taken by a busy instance that did not start them.
    pub fn pending(&self) -> usize {
        self.shared.lock().len() + self.shared.waiting.get()
    }

    /// Accepts no more requests; instances execute what is queued, then stop.
    pub fn stop(&self) {
        self.shared.lock().stop();
        self.shared.work.notify_all();
        self.shared.ahead.notify_all();
        self.shared.timer.notify_all();
        let timer = self.timer.lock().take();
        if let Some(thread) = timer {
            let _ = thread.join();
        }
    }

    /// A source for one more instance runner.
    pub fn source(&self, retired: Retired) -> Box<dyn BatchSource> {
        let shared = self.shared.clone();
        // Under the lock, so that a source about to wait hears it; with
        // nothing queued, the next request wakes it instead.
        let freed = move || {
            let queued = shared.lock().len() > 0;
            if queued {
                shared.ahead.notify_all();
            }
        };
        let load = InstanceLoad::new(self.shared.waiting.clone(), Some(Box::new(freed)));
        Box::new(DynamicSource {
            shared: self.shared.clone(),
            retired,
            load: Arc::new(load),
        })
    }

    /// Wakes the instances that wait for work, so that a retired one stops.
    pub fn wake_idle(&self) {
        self.shared.work.notify_all();
        self.shared.ahead.notify_all();
    }
}

impl Drop for DynamicBatcher {
    fn drop(&mut self) {
        self.stop();
    }
}

fn has_timeouts(config: &ModelDynamicBatching) -> bool {
    config
        .default_queue_policy
        .iter()
        .chain(config.priority_queue_policy.values())
        .any(|p| p.default_timeout_microseconds != 0)
}

/// Triton's text: `[request id: <id>] Exceeds maximum queue size`.
fn refusal_error(id: &str, refusal: Refusal) -> Error {
    let id = if id.is_empty() { "<id_unknown>" } else { id };
    match refusal {
        Refusal::QueueFull => {
            Error::unavailable(format!("[request id: {id}] Exceeds maximum queue size"))
        }
        Refusal::Stopped => Error::unavailable(format!(
            "[request id: {id}] Server is stopping, scheduler for model has stopped accepting \
             new inference requests"
        )),
    }
}

/// Answers the requests the queue policies removed.
fn finish_removed(removed: Removed<Job>) {
    for job in removed.timed_out {
        job.record.finished(Some(FailureReason::Rejected));
        job.request
            .sink
            .respond(Err(Error::unavailable("Request timeout expired")));
    }
    for job in removed.cancelled {
        job.request.sink.respond(Err(Error::new(
            ErrorKind::Cancelled,
            "request was cancelled before it executed",
        )));
    }
}

/// One instance's view of the batcher.
struct DynamicSource {
    shared: Arc<Shared>,
    retired: Retired,
    load: Arc<InstanceLoad>,
}

impl BatchSource for DynamicSource {
    fn next_batch(&mut self) -> Option<Vec<Job>> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        loop {
            if self.retired.is_set() {
                // The wake-up may have been meant for work: pass it on.
                shared.work.notify_one();
                return None;
            }
            let now = Instant::now();
            let busy = self.load.is_busy();
            let step = state.next(now, busy);
            let answered = !step.removed.is_empty();
            if answered {
                drop(state);
                finish_removed(step.removed);
                state = shared.lock();
            }
            match step.next {
                Next::Batch(mut batch) => {
                    self.load.take(batch.len());
                    if state.len() > 0 {
                        // Another instance may take what is left.
                        shared.wake_for_requests(shared.has_idle(), shared.has_waiting_ahead());
                    }
                    drop(state);
                    if let Some(padding) = &shared.padding {
                        padding.apply(&mut batch);
                    }
                    return Some(batch);
                }
                Next::Stopped => {
                    shared.work.notify_all();
                    shared.ahead.notify_all();
                    return None;
                }
                _ if answered => continue,
                Next::WaitForRequests if busy => state = shared.wait_ahead(state, &self.load),
                Next::WaitForRequests => state = shared.wait_for_work(state, None),
                Next::WaitUntil(at) => {
                    let timeout = at.saturating_duration_since(now);
                    state = shared.wait_for_work(state, Some(timeout));
                }
            }
        }
    }

    fn load(&self) -> Arc<InstanceLoad> {
        self.load.clone()
    }
}

/// Rejects (or delays) requests whose queue timeout passed while no
/// instance was free to notice.
fn run_timer(shared: &Shared) {
    let mut state = shared.lock();
    while !state.is_stopped() {
        let now = Instant::now();
        let removed = state.expire(now);
        if !removed.is_empty() {
            drop(state);
            finish_removed(removed);
            state = shared.lock();
            continue;
        }
        match state.next_deadline() {
            Some(at) => {
                let timeout = at.saturating_duration_since(now);
                shared.timer.wait_for(&mut state, timeout);
            }
            None => shared.timer.wait(&mut state),
        }
    }
}

#[cfg(test)]
mod tests;
