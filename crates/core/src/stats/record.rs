//! The statistics of one request, recorded once both its execution times and
//! its outcome are known (a decoupled model may answer after `execute` returns).

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use parking_lot::{Mutex, MutexGuard};

use super::{FailureReason, StatsCollector, times::ExecutionTimes};

/// One request's pending statistics.
#[derive(Debug)]
pub(crate) struct RequestRecord {
    pub arrival: Instant,
    stats: Arc<StatsCollector>,
    state: Mutex<RecordState>,
    /// The ensemble request this one is a step of: its times add up there.
    parent: Option<Arc<StepTimes>>,
    /// Set by the first response.
    responded: AtomicBool,
}

#[derive(Debug, Default)]
struct RecordState {
    /// The execution's times and the request's batch size.
    executed: Option<(ExecutionTimes, u64)>,
    succeeded_at: Option<Instant>,
    recorded: bool,
}

impl RequestRecord {
    /// A request that arrived at `arrival`.
    pub fn new(stats: Arc<StatsCollector>, arrival: Instant) -> Self {
        Self {
            arrival,
            stats,
            state: Mutex::default(),
            parent: None,
            responded: AtomicBool::new(false),
        }
    }

    /// A request that is a step of an ensemble request whose times are `parent`.
    pub fn for_step(stats: Arc<StatsCollector>, arrival: Instant, parent: Arc<StepTimes>) -> Self {
        Self {
            parent: Some(parent),
            ..Self::new(stats, arrival)
        }
    }

    /// The request, of `batch_size` inferences, was part of an execution
    /// with these times.
    pub fn executed(&self, times: ExecutionTimes, batch_size: u64) {
        let mut state = self.state.lock();
        state.executed = Some((times, batch_size));
        self.record_if_complete(&mut state);
        drop(state);
        if let Some(parent) = &self.parent {
            parent.add(times);
        }
    }

    /// The request was answered from the response cache: its lookup began
    /// `queue` after arrival and took `lookup`.
    pub fn cache_hit(&self, queue: Duration, lookup: Duration) {
        let mut state = self.state.lock();
        state.recorded = true;
        drop(state);
        self.stats
            .record_cache_hit(self.arrival.elapsed(), queue, lookup);
        if let Some(parent) = &self.parent {
            parent.add(ExecutionTimes {
                queue,
                ..ExecutionTimes::default()
            });
        }
    }

    /// A response (or error) of the request left; the first one is timed.
    pub fn responded(&self) {
        if !self.responded.swap(true, Ordering::Relaxed) {
            self.stats.record_first_response(self.arrival.elapsed());
        }
    }

    /// The request never entered a queue (refused when enqueued): it is not
    /// counted, as in Triton.
    pub fn discard(&self) {
        self.state.lock().recorded = true;
    }

    /// The request's final response was sent: a success (`None`), or a
    /// failure and its reason.
    pub fn finished(&self, failure: Option<FailureReason>) {
        let now = Instant::now();
        let mut state = self.state.lock();
        if state.recorded {
            return;
        }
        match failure {
            None => {
                state.succeeded_at = Some(now);
                self.record_if_complete(&mut state);
            }
            Some(reason) => {
                state.recorded = true;
                self.stats.record_failure(now - self.arrival, reason);
            }
        }
    }

    fn record_if_complete(&self, state: &mut RecordState) {
        if state.recorded {
            return;
        }
        if let (Some((times, batch_size)), Some(end)) = (state.executed, state.succeeded_at) {
            state.recorded = true;
            self.stats
                .record_success(end - self.arrival, &times, batch_size);
        }
    }
}

/// The summed times of an ensemble request's steps: Triton reports an
/// ensemble's queue and compute times as those of its steps together.
#[derive(Default)]
pub(crate) struct StepTimes(Mutex<StepTimesState>);

#[derive(Default)]
struct StepTimesState {
    sum: ExecutionTimes,
    started: usize,
    executed: usize,
    on_all_executed: Option<Box<dyn FnOnce(ExecutionTimes) + Send>>,
}

impl std::fmt::Debug for StepTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.0.lock();
        f.debug_struct("StepTimes")
            .field("sum", &state.sum)
            .field("started", &state.started)
            .field("executed", &state.executed)
            .finish()
    }
}

impl StepTimes {
    /// One more step was sent to its model.
    pub fn step_started(&self) {
        self.0.lock().started += 1;
    }

    /// Calls `done` with the sum once every started step has executed (at
    /// once if they all have).
    pub fn when_all_executed(&self, done: impl FnOnce(ExecutionTimes) + Send + 'static) {
        let mut state = self.0.lock();
        state.on_all_executed = Some(Box::new(done));
        Self::fire_if_complete(state);
    }

    fn add(&self, times: ExecutionTimes) {
        let mut state = self.0.lock();
        let sum = &mut state.sum;
        sum.queue += times.queue;
        sum.compute_input += times.compute_input;
        sum.compute_infer += times.compute_infer;
        sum.compute_output += times.compute_output;
        state.executed += 1;
        Self::fire_if_complete(state);
    }

    fn fire_if_complete(mut state: MutexGuard<'_, StepTimesState>) {
        if state.executed < state.started {
            return;
        }
        if let Some(done) = state.on_all_executed.take() {
            let sum = state.sum;
            drop(state);
            done(sum);
        }
    }
}
