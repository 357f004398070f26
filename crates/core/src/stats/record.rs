//! The statistics of one request, recorded once both its execution times and
//! its outcome are known (a decoupled model may answer after `execute` returns).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use super::{FailureReason, StatsCollector};

/// Where one execution spent its time, as seen by each request in it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExecutionTimes {
    pub queue: Duration,
    pub compute_input: Duration,
    pub compute_infer: Duration,
    pub compute_output: Duration,
}

/// One request's pending statistics.
#[derive(Debug)]
pub(crate) struct RequestRecord {
    pub arrival: Instant,
    stats: Arc<StatsCollector>,
    state: Mutex<RecordState>,
}

#[derive(Debug, Default)]
struct RecordState {
    executed: Option<ExecutionTimes>,
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
        }
    }

    /// The request was part of an execution with these times.
    pub fn executed(&self, times: ExecutionTimes) {
        let mut state = self.state.lock().unwrap();
        state.executed = Some(times);
        self.record_if_complete(&mut state);
    }

    /// The request never entered a queue (refused when enqueued): it is not
    /// counted, as in Triton.
    pub fn discard(&self) {
        self.state.lock().unwrap().recorded = true;
    }

    /// The request's final response was sent: a success (`None`), or a
    /// failure and its reason.
    pub fn finished(&self, failure: Option<FailureReason>) {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap();
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
        if let (Some(times), Some(end)) = (state.executed, state.succeeded_at) {
            state.recorded = true;
            self.stats.record_success(end - self.arrival, &times);
        }
    }
}
