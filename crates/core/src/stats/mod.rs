//! Per-model-version statistics, counted as Triton counts them: per request
//! (success/fail, queue, compute_input/infer/output), per execution
//! (inference_count vs execution_count) and per batch size.

mod histogram;
mod quantiles;
mod reason;
mod record;
mod settings;
mod summary;
mod times;

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use parking_lot::Mutex;

pub use histogram::{
    FIRST_RESPONSE_BUCKETS_MS, HistogramSnapshot, LATENCY_BUCKETS_US, LatencySnapshot,
};
pub use reason::{FailureCounts, FailureReason};
pub(crate) use record::{RequestRecord, StepTimes};
pub(crate) use settings::StatsSettings;
pub use summary::{SummariesSnapshot, SummarySnapshot};
pub(crate) use times::ExecutionTimes;

use histogram::{Histogram, LatencyHistograms};
use summary::LatencySummaries;

/// A count and the total time of what was counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatDuration {
    pub count: u64,
    pub ns: u64,
}

impl StatDuration {
    fn add(&mut self, d: Duration) {
        self.count += 1;
        self.ns = self.ns.saturating_add(nanos(d));
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
    /// Inferences of successful requests: a request of batch size 4 counts 4.
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
    /// Latency summaries, when enabled.
    summaries: Option<LatencySummaries>,
    /// Request to first response, in milliseconds (decoupled models), when enabled.
    first_response: Option<Histogram>,
}

/// A model version's latency metrics at one moment; each `None` when off.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LatencyMetrics {
    /// oxiserve's latency histograms.
    pub histograms: Option<LatencySnapshot>,
    /// Triton's latency summaries.
    pub summaries: Option<SummariesSnapshot>,
    /// Triton's request to first response histogram, in milliseconds.
    pub first_response: Option<HistogramSnapshot>,
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
    /// A collector of the latency metrics `settings` ask for (the
    /// first-response histogram only for a `decoupled` model, the cache's
    /// summaries only for a `cached` one).
    pub(crate) fn new(settings: &StatsSettings, decoupled: bool, cached: bool) -> Self {
        let first_response = settings.first_response && decoupled;
        Self {
            inner: Mutex::default(),
            histograms: settings.histograms.then(LatencyHistograms::default),
            summaries: settings
                .summaries
                .clone()
                .map(|targets| LatencySummaries::new(targets, cached)),
            first_response: first_response.then(|| Histogram::new(&FIRST_RESPONSE_BUCKETS_MS)),
        }
    }

    /// Records a request of `batch_size` inferences that succeeded.
    pub(crate) fn record_success(&self, total: Duration, times: &ExecutionTimes, batch_size: u64) {
        let mut c = self.inner.lock();
        c.last_inference = now_ms();
        c.inference_count += batch_size;
        c.infer.success.add(total);
        c.infer.queue.add(times.queue);
        c.infer.compute_input.add(times.compute_input);
        c.infer.compute_infer.add(times.compute_infer);
        c.infer.compute_output.add(times.compute_output);
        drop(c);
        if let Some(histograms) = &self.histograms {
            histograms.observe(total, times);
        }
        if let Some(summaries) = &self.summaries {
            summaries.observe(total, times);
        }
    }

    /// Records a request answered from the response cache, as Triton does:
    /// a success with its queue time (up to the lookup) and the lookup as
    /// the hit's time; no inference, no execution.
    pub(crate) fn record_cache_hit(&self, total: Duration, queue: Duration, lookup: Duration) {
        let mut c = self.inner.lock();
        c.infer.success.add(total);
        c.infer.queue.add(queue);
        c.infer.cache_hit.add(lookup);
        drop(c);
        if let Some(summaries) = &self.summaries {
            summaries.observe_cache_hit(queue, lookup);
        }
    }

    /// Records a cache miss whose lookup and insert took `duration`: added
    /// to the request time as well, as Triton does.
    pub(crate) fn record_cache_miss(&self, duration: Duration) {
        let mut c = self.inner.lock();
        c.infer.success.ns = c.infer.success.ns.saturating_add(nanos(duration));
        c.infer.cache_miss.add(duration);
        drop(c);
        if let Some(summaries) = &self.summaries {
            summaries.observe_cache_miss(duration);
        }
    }

    /// Records the time from a request's arrival to its first response.
    pub(crate) fn record_first_response(&self, elapsed: Duration) {
        if let Some(histogram) = &self.first_response {
            histogram.observe(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        }
    }

    /// Records a request that failed, at whatever stage, and why.
    pub(crate) fn record_failure(&self, total: Duration, reason: FailureReason) {
        let mut c = self.inner.lock();
        c.last_inference = now_ms();
        c.infer.fail.add(total);
        c.failures.add(reason);
    }

    /// Records one execution of `batch_size` inferences, whatever its outcome.
    pub(crate) fn record_execution(&self, batch_size: u64, times: &ExecutionTimes) {
        let mut c = self.inner.lock();
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

    /// The latency metrics so far.
    pub fn latency(&self) -> LatencyMetrics {
        LatencyMetrics {
            histograms: self.histograms.as_ref().map(LatencyHistograms::snapshot),
            summaries: self.summaries.as_ref().map(LatencySummaries::snapshot),
            first_response: self.first_response.as_ref().map(Histogram::snapshot),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
