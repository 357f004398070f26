//! Latency histograms recorded with atomics only: observing a value is a
//! bucket search and two relaxed atomic additions, no lock.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use super::times::ExecutionTimes;

/// Upper bounds of the buckets, in microseconds (a last `+Inf` bucket follows).
pub const LATENCY_BUCKETS_US: [u64; 18] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000,
];

/// One histogram of durations in microseconds.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    /// Per-bucket (not cumulative) counts; the last one is `+Inf`.
    buckets: [AtomicU64; LATENCY_BUCKETS_US.len() + 1],
    sum_us: AtomicU64,
}

impl Histogram {
    fn observe(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_BUCKETS_US.partition_point(|&bound| bound < us);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }

    fn snapshot(&self) -> HistogramSnapshot {
        let mut total = 0;
        let cumulative = self
            .buckets
            .iter()
            .map(|b| {
                total += b.load(Ordering::Relaxed);
                total
            })
            .collect();
        HistogramSnapshot {
            cumulative,
            sum_us: self.sum_us.load(Ordering::Relaxed),
        }
    }
}

/// A histogram's values: cumulative counts per bucket of
/// [`LATENCY_BUCKETS_US`] then `+Inf` (whose count is the total), and the sum.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HistogramSnapshot {
    pub cumulative: Vec<u64>,
    pub sum_us: u64,
}

impl HistogramSnapshot {
    /// How many values were observed.
    pub fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

/// The latency histograms of one model version, fed by successful requests.
#[derive(Debug, Default)]
pub(crate) struct LatencyHistograms {
    request: Histogram,
    queue: Histogram,
    compute_infer: Histogram,
}

impl LatencyHistograms {
    /// Records one successful request.
    pub fn observe(&self, total: Duration, times: &ExecutionTimes) {
        self.request.observe(total);
        self.queue.observe(times.queue);
        self.compute_infer.observe(times.compute_infer);
    }

    pub fn snapshot(&self) -> LatencySnapshot {
        LatencySnapshot {
            request: self.request.snapshot(),
            queue: self.queue.snapshot(),
            compute_infer: self.compute_infer.snapshot(),
        }
    }
}

/// The latency histograms of one model version at one moment.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// From arrival to the final response.
    pub request: HistogramSnapshot,
    /// From queuing to the start of execution.
    pub queue: HistogramSnapshot,
    /// The model's compute time (Triton's compute_infer).
    pub compute_infer: HistogramSnapshot,
}
