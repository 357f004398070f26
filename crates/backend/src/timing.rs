//! Where an execution's computation starts and ends, for Triton's
//! compute_input / compute_infer / compute_output statistics.

use std::{sync::Arc, time::Instant};

use parking_lot::Mutex;

/// Marks set by an instance during `execute`. Unmarked, the whole execution
/// counts as compute_infer.
#[derive(Debug, Default)]
pub struct ComputeTiming {
    compute_start: Option<Instant>,
    compute_end: Option<Instant>,
    deferred: Option<Arc<Deferred>>,
}

impl ComputeTiming {
    /// Inputs are ready; the computation starts now.
    pub fn start_compute(&mut self) {
        self.compute_start = Some(Instant::now());
    }

    /// The computation is done; outputs are produced from now on.
    pub fn end_compute(&mut self) {
        self.compute_end = Some(Instant::now());
    }

    /// Marks where the computation started and ended as the backend measured
    /// them itself (a C backend's `TRITONBACKEND_ModelInstanceReportBatchStatistics`).
    pub fn mark_compute(&mut self, start: Instant, end: Instant) {
        self.compute_start = Some(start);
        self.compute_end = Some(end);
    }

    /// The computation goes on after `execute` returns (an instance that
    /// pipelines batches): the batch's timing is recorded when the returned
    /// handle says it ended.
    pub fn defer(&mut self) -> BatchEnd {
        let deferred = Arc::new(Deferred::default());
        self.deferred = Some(deferred.clone());
        BatchEnd(Some(deferred))
    }

    /// When the computation started, if marked.
    pub fn compute_start(&self) -> Option<Instant> {
        self.compute_start
    }

    /// When the computation ended, if marked.
    pub fn compute_end(&self) -> Option<Instant> {
        self.compute_end
    }

    /// Calls `record` with the batch's end: now, or when a deferred batch ends.
    pub fn on_end(self, record: impl FnOnce(Instant) + Send + 'static) {
        match self.deferred {
            None => record(Instant::now()),
            Some(deferred) => deferred.on_end(Box::new(record)),
        }
    }
}

/// The end of a batch whose computation outlives `execute`; dropping it
/// also ends the batch.
#[derive(Debug)]
pub struct BatchEnd(Option<Arc<Deferred>>);

impl BatchEnd {
    /// The batch's computation ended now.
    pub fn ended(mut self) {
        if let Some(deferred) = self.0.take() {
            deferred.ended(Instant::now());
        }
    }
}

impl Drop for BatchEnd {
    fn drop(&mut self) {
        if let Some(deferred) = self.0.take() {
            deferred.ended(Instant::now());
        }
    }
}

type Recorder = Box<dyn FnOnce(Instant) + Send>;

#[derive(Default)]
struct Deferred(Mutex<(Option<Instant>, Option<Recorder>)>);

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Deferred")
    }
}

impl Deferred {
    fn ended(&self, at: Instant) {
        let recorder = {
            let mut state = self.0.lock();
            state.0 = Some(at);
            state.1.take()
        };
        if let Some(record) = recorder {
            record(at);
        }
    }

    fn on_end(&self, record: Recorder) {
        let ended = {
            let mut state = self.0.lock();
            if state.0.is_none() {
                state.1 = Some(record);
                return;
            }
            state.0
        };
        if let Some(at) = ended {
            record(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn an_undeferred_batch_ends_when_execute_returns() {
        let (tx, rx) = mpsc::channel();
        ComputeTiming::default().on_end(move |at| tx.send(at).unwrap());
        assert!(rx.try_recv().is_ok());
    }

    #[test]
    fn a_deferred_batch_is_recorded_when_it_ends() {
        let mut timing = ComputeTiming::default();
        let end = timing.defer();
        let (tx, rx) = mpsc::channel();
        timing.on_end(move |at| tx.send(at).unwrap());
        assert!(rx.try_recv().is_err(), "not ended yet");
        end.ended();
        assert!(rx.try_recv().is_ok());
    }

    #[test]
    fn a_batch_that_ended_before_the_recorder_came_is_recorded_at_once() {
        let mut timing = ComputeTiming::default();
        drop(timing.defer());
        let (tx, rx) = mpsc::channel();
        timing.on_end(move |at| tx.send(at).unwrap());
        assert!(rx.try_recv().is_ok());
    }
}
