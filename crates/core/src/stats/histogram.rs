//! Latency histograms recorded with atomics only: observing a value is a
//! bucket search and two relaxed atomic additions, no lock.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use super::times::ExecutionTimes;

/// Upper bounds of oxiserve's latency buckets, in microseconds (a last
/// `+Inf` bucket follows).
pub const LATENCY_BUCKETS_US: [u64; 18] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000,
];

/// Upper bounds of Triton's first-response buckets, in milliseconds.
pub const FIRST_RESPONSE_BUCKETS_MS: [u64; 4] = [100, 500, 2_000, 5_000];

/// One histogram of whole numbers (durations in one unit).
#[derive(Debug)]
pub(crate) struct Histogram {
    bounds: &'static [u64],
    /// Per-bucket (not cumulative) counts; the last one is `+Inf`.
    buckets: Vec<AtomicU64>,
    sum: AtomicU64,
}

impl Histogram {
    /// A histogram with these upper bounds, then `+Inf`.
    pub fn new(bounds: &'static [u64]) -> Self {
        Self {
            bounds,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
        }
    }

    /// Counts `value` in the first bucket whose bound is not below it.
    pub fn observe(&self, value: u64) {
        let bucket = self.bounds.partition_point(|&bound| bound < value);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(value, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
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
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// A histogram's values: cumulative counts per bucket, then `+Inf` (whose
/// count is the total), and the sum, in the histogram's unit.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HistogramSnapshot {
    pub cumulative: Vec<u64>,
    pub sum: u64,
}

impl HistogramSnapshot {
    /// How many values were observed.
    pub fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

/// oxiserve's latency histograms of one model version, fed by successful
/// requests, in microseconds.
#[derive(Debug)]
pub(crate) struct LatencyHistograms {
    request: Histogram,
    queue: Histogram,
    compute_infer: Histogram,
}

impl Default for LatencyHistograms {
    fn default() -> Self {
        Self {
            request: Histogram::new(&LATENCY_BUCKETS_US),
            queue: Histogram::new(&LATENCY_BUCKETS_US),
            compute_infer: Histogram::new(&LATENCY_BUCKETS_US),
        }
    }
}

impl LatencyHistograms {
    /// Records one successful request.
    pub fn observe(&self, total: Duration, times: &ExecutionTimes) {
        self.request.observe(micros(total));
        self.queue.observe(micros(times.queue));
        self.compute_infer.observe(micros(times.compute_infer));
    }

    pub fn snapshot(&self) -> LatencySnapshot {
        LatencySnapshot {
            request: self.request.snapshot(),
            queue: self.queue.snapshot(),
            compute_infer: self.compute_infer.snapshot(),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// oxiserve's latency histograms of one model version at one moment.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// From arrival to the final response.
    pub request: HistogramSnapshot,
    /// From queuing to the start of execution.
    pub queue: HistogramSnapshot,
    /// The model's compute time (Triton's compute_infer).
    pub compute_infer: HistogramSnapshot,
}
