//! Where the load loops put their samples: a few mutex-guarded shards (a
//! worker locks only its own, uncontended), drained into one [`Window`] at
//! each window boundary, plus atomic counters of requests sent and completed.

use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;
use parking_lot::Mutex;

use crate::client::Outcome;

/// Latencies are kept in microseconds up to this bound (larger ones saturate).
const MAX_LATENCY_US: u64 = 100_000_000;

/// Samples of one measurement window (or several merged).
#[derive(Debug, Clone)]
pub struct Window {
    /// Latencies of successful requests, in microseconds.
    pub latency_us: Histogram<u64>,
    pub ok: u64,
    pub errors: u64,
    pub latency_ns_sum: u64,
    pub send_ns_sum: u64,
    pub recv_ns_sum: u64,
    /// Responses to the successful requests (more than `ok` from a decoupled model).
    pub responses: u64,
    /// Open loop: requests that started more than 1 ms after their slot.
    pub late: u64,
    pub first_error: Option<String>,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid bounds"),
            ok: 0,
            errors: 0,
            latency_ns_sum: 0,
            send_ns_sum: 0,
            recv_ns_sum: 0,
            responses: 0,
            late: 0,
            first_error: None,
        }
    }
}

impl Window {
    /// Adds `other`'s samples to this window's.
    pub fn merge(&mut self, other: &Window) {
        self.latency_us.add(&other.latency_us).expect("same bounds");
        self.ok += other.ok;
        self.errors += other.errors;
        self.latency_ns_sum += other.latency_ns_sum;
        self.send_ns_sum += other.send_ns_sum;
        self.recv_ns_sum += other.recv_ns_sum;
        self.responses += other.responses;
        self.late += other.late;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }

    fn reset(&mut self) {
        self.latency_us.reset();
        self.ok = 0;
        self.errors = 0;
        self.latency_ns_sum = 0;
        self.send_ns_sum = 0;
        self.recv_ns_sum = 0;
        self.responses = 0;
        self.late = 0;
        self.first_error = None;
    }

    fn record(&mut self, latency_ns: u64, outcome: Outcome) {
        match outcome.error {
            None => {
                self.ok += 1;
                self.latency_us
                    .saturating_record((latency_ns / 1000).max(1));
                self.latency_ns_sum += latency_ns;
                self.send_ns_sum += outcome.send_ns;
                self.recv_ns_sum += outcome.recv_ns;
                self.responses += outcome.responses;
            }
            Some(error) => {
                self.errors += 1;
                if self.first_error.is_none() {
                    self.first_error = Some(error);
                }
            }
        }
    }
}

/// Shared by the workers of one load level and the measuring loop.
#[derive(Debug)]
pub struct Recorder {
    shards: Vec<Mutex<Window>>,
    sent: AtomicU64,
    completed: AtomicU64,
}

impl Recorder {
    /// A recorder with `shards` shards (workers pick theirs by index).
    pub fn new(shards: usize) -> Self {
        Recorder {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(Window::default()))
                .collect(),
            sent: AtomicU64::new(0),
            completed: AtomicU64::new(0),
        }
    }

    /// Counts a request about to be sent.
    pub fn sending(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a finished request into worker `worker`'s shard.
    pub fn record(&self, worker: usize, latency_ns: u64, late: bool, outcome: Outcome) {
        let mut shard = self.shards[worker % self.shards.len()].lock();
        shard.record(latency_ns, outcome);
        shard.late += u64::from(late);
        drop(shard);
        self.completed.fetch_add(1, Ordering::Release);
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Requests finished (answered or failed) so far.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// Everything recorded since the last call, leaving the shards empty.
    pub fn take(&self) -> Window {
        let mut all = Window::default();
        for shard in &self.shards {
            let mut shard = shard.lock();
            all.merge(&shard);
            shard.reset();
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(send_ns: u64) -> Outcome {
        Outcome {
            send_ns,
            recv_ns: 1,
            responses: 3,
            error: None,
        }
    }

    #[test]
    fn take_merges_shards_and_empties_them() {
        let r = Recorder::new(2);
        r.sending();
        r.sending();
        r.sending();
        r.record(0, 5_000, false, ok(10));
        r.record(1, 7_000, true, ok(20));
        r.record(
            3,
            1,
            false,
            Outcome {
                error: Some("boom".into()),
                ..Outcome::default()
            },
        );
        let w = r.take();
        assert_eq!((r.sent(), r.completed()), (3, 3));
        assert_eq!((w.ok, w.errors, w.late), (2, 1, 1));
        assert_eq!((w.latency_ns_sum, w.send_ns_sum), (12_000, 30));
        assert_eq!(w.responses, 6, "failed requests have no responses");
        assert_eq!(w.latency_us.max(), 7);
        assert_eq!(w.first_error.as_deref(), Some("boom"));
        assert_eq!(r.take().ok, 0);
    }
}
