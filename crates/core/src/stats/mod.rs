//! Per-model-version statistics, counted as Triton counts them: per request
//! (success/fail, queue, compute_input/infer/output), per execution
//! (inference_count vs execution_count) and per batch size.

mod histogram;
mod reason;
mod record;
mod times;

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use parking_lot::Mutex;

pub use histogram::{HistogramSnapshot, LATENCY_BUCKETS_US, LatencySnapshot};
pub use reason::{FailureCounts, FailureReason};
pub(crate) use record::{RequestRecord, StepTimes};
pub(crate) use times::ExecutionTimes;

use histogram::LatencyHistograms;

/// A count and the total time of what was counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatDuration {
    pub count: u64,
    pub ns: u64,
}

impl StatDuration {
    fn add(&mut self, d: Duration) {
        self.count += 1;
        self.ns += u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    }
}

/// Per-request statistics (Triton's `InferStatistics`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct InferStatistics {
    pub success: StatDuration,
    pub fail: StatDuration,
    pub queue: StatDuration,
    pub compute_input: StatDuration,
    pub compute_infer: StatDuration,
    pub compute_output: StatDuration,
    pub cache_hit: StatDuration,
    pub cache_miss: StatDuration,
}

/// Executions of one batch size (Triton's `InferBatchStatistics`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BatchStatistics {
    pub batch_size: u64,
    pub compute_input: StatDuration,
    pub compute_infer: StatDuration,
    pub compute_output: StatDuration,
}

/// A snapshot of one model version's statistics.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ModelStatistics {
    pub name: String,
    pub version: i64,
    /// Milliseconds since the epoch of the last completed request; 0 if none.
    pub last_inference: u64,
    /// Inferences performed: a request of batch size 4 counts 4.
    pub inference_count: u64,
    /// Model executions: a batch of several requests counts once.
    pub execution_count: u64,
    pub inference_stats: InferStatistics,
    pub batch_stats: Vec<BatchStatistics>,
    /// Failed requests per reason (their sum is `inference_stats.fail.count`).
    pub failures: FailureCounts,
}

/// Collects one model version's statistics; shared by its requests and runners.
#[derive(Debug, Default)]
pub struct StatsCollector {
    inner: Mutex<Counters>,
    /// Latency histograms, when enabled; recorded outside the lock.
    histograms: Option<LatencyHistograms>,
}

#[derive(Debug, Default)]
struct Counters {
    last_inference: u64,
    inference_count: u64,
    execution_count: u64,
    infer: InferStatistics,
    batches: BTreeMap<u64, BatchStatistics>,
    failures: FailureCounts,
}

impl StatsCollector {
    /// A collector; `histograms` turns the latency histograms on.
    pub(crate) fn new(histograms: bool) -> Self {
        Self {
            inner: Mutex::default(),
            histograms: histograms.then(LatencyHistograms::default),
        }
    }

    /// Records a request that succeeded.
    pub(crate) fn record_success(&self, total: Duration, times: &ExecutionTimes) {
        let mut c = self.inner.lock();
        c.last_inference = now_ms();
        c.infer.success.add(total);
        c.infer.queue.add(times.queue);
        c.infer.compute_input.add(times.compute_input);
        c.infer.compute_infer.add(times.compute_infer);
        c.infer.compute_output.add(times.compute_output);
        drop(c);
        if let Some(histograms) = &self.histograms {
            histograms.observe(total, times);
        }
    }

    /// Records a request that failed, at whatever stage, and why.
    pub(crate) fn record_failure(&self, total: Duration, reason: FailureReason) {
        let mut c = self.inner.lock();
        c.last_inference = now_ms();
        c.infer.fail.add(total);
        c.failures.add(reason);
    }

    /// Records one execution of `batch_size` inferences.
    pub(crate) fn record_execution(&self, batch_size: u64, times: &ExecutionTimes) {
        let mut c = self.inner.lock();
        c.inference_count += batch_size;
        c.execution_count += 1;
        let batch = c
            .batches
            .entry(batch_size)
            .or_insert_with(|| BatchStatistics {
                batch_size,
                ..Default::default()
            });
        batch.compute_input.add(times.compute_input);
        batch.compute_infer.add(times.compute_infer);
        batch.compute_output.add(times.compute_output);
    }

    /// The statistics so far, labelled with the model's name and version.
    pub fn snapshot(&self, name: &str, version: i64) -> ModelStatistics {
        let c = self.inner.lock();
        ModelStatistics {
            name: name.to_string(),
            version,
            last_inference: c.last_inference,
            inference_count: c.inference_count,
            execution_count: c.execution_count,
            inference_stats: c.infer.clone(),
            batch_stats: c.batches.values().cloned().collect(),
            failures: c.failures,
        }
    }

    /// The latency histograms so far; `None` when they are off.
    pub fn latency(&self) -> Option<LatencySnapshot> {
        self.histograms.as_ref().map(LatencyHistograms::snapshot)
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
