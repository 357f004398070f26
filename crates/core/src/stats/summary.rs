//! Latency summaries (Triton's `nv_inference_*_summary_us`, on with
//! `--metrics-config summary_latencies=true`): a count, a sum and quantile
//! estimates over a sliding window of the last 60 seconds, as Triton's
//! prometheus-cpp summaries keep them (five age buckets, each rotated out
//! after 12 seconds).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use parking_lot::Mutex;

use super::{quantiles::Estimator, times::ExecutionTimes};
use crate::config::Quantile;

const MAX_AGE: Duration = Duration::from_secs(60);
const AGE_BUCKETS: u32 = 5;

/// One summary at one moment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SummarySnapshot {
    pub count: u64,
    pub sum: f64,
    /// `(quantile, estimate)` per target, in the configured order; NaN
    /// estimates when the window holds no observation.
    pub estimates: Vec<(f64, f64)>,
}

/// A count, a sum and windowed quantile estimates of one duration.
#[derive(Debug)]
struct Summary(Mutex<SummaryState>);

#[derive(Debug)]
struct SummaryState {
    count: u64,
    sum: f64,
    /// Every observation goes into each; the oldest answers queries.
    ages: Vec<Estimator>,
    oldest: usize,
    rotated: Instant,
}

impl Summary {
    fn new(targets: &Arc<[Quantile]>) -> Self {
        Self(Mutex::new(SummaryState {
            count: 0,
            sum: 0.0,
            ages: vec![Estimator::new(targets.clone()); AGE_BUCKETS as usize],
            oldest: 0,
            rotated: Instant::now(),
        }))
    }

    /// Observes a duration, in whole microseconds as Triton does.
    fn observe(&self, d: Duration) {
        let us = d.as_micros() as f64;
        let mut s = self.0.lock();
        s.rotate(Instant::now());
        s.count += 1;
        s.sum += us;
        for age in &mut s.ages {
            age.insert(us);
        }
    }

    fn snapshot(&self, targets: &[Quantile]) -> SummarySnapshot {
        let mut s = self.0.lock();
        s.rotate(Instant::now());
        let oldest = s.oldest;
        let estimates = targets
            .iter()
            .map(|t| (t.quantile, s.ages[oldest].get(t.quantile)))
            .collect();
        SummarySnapshot {
            count: s.count,
            sum: s.sum,
            estimates,
        }
    }
}

impl SummaryState {
    fn rotate(&mut self, now: Instant) {
        let interval = MAX_AGE / AGE_BUCKETS;
        let mut late = now.saturating_duration_since(self.rotated);
        if late > MAX_AGE + interval {
            // Idle for longer than the window: start afresh.
            self.ages.iter_mut().for_each(Estimator::clear);
            self.rotated = now;
            return;
        }
        while late > interval {
            self.ages[self.oldest].clear();
            self.oldest = (self.oldest + 1) % self.ages.len();
            self.rotated += interval;
            late -= interval;
        }
    }
}

/// The latency summaries of one model version, fed by successful requests.
/// A model with the response cache has the cache's two summaries and, as in
/// Triton 2.51, no request summary (Triton leaves it out there because a
/// miss's insert time would need a second observation).
#[derive(Debug)]
pub(crate) struct LatencySummaries {
    targets: Arc<[Quantile]>,
    request: Option<Summary>,
    queue: Summary,
    compute_input: Summary,
    compute_infer: Summary,
    compute_output: Summary,
    cache_hit: Option<Summary>,
    cache_miss: Option<Summary>,
}

/// The latency summaries of one model version at one moment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SummariesSnapshot {
    /// `None` for a model with the response cache.
    pub request: Option<SummarySnapshot>,
    pub queue: SummarySnapshot,
    pub compute_input: SummarySnapshot,
    pub compute_infer: SummarySnapshot,
    pub compute_output: SummarySnapshot,
    /// The cache's lookups that hit, and lookups plus inserts that missed;
    /// only for a model with the response cache.
    pub cache_hit: Option<SummarySnapshot>,
    pub cache_miss: Option<SummarySnapshot>,
}

impl LatencySummaries {
    /// The summaries of a model, `cached` or not.
    pub fn new(targets: Arc<[Quantile]>, cached: bool) -> Self {
        let cache = || cached.then(|| Summary::new(&targets));
        Self {
            request: (!cached).then(|| Summary::new(&targets)),
            queue: Summary::new(&targets),
            compute_input: Summary::new(&targets),
            compute_infer: Summary::new(&targets),
            compute_output: Summary::new(&targets),
            cache_hit: cache(),
            cache_miss: cache(),
            targets,
        }
    }

    /// Records one successful request.
    pub fn observe(&self, total: Duration, times: &ExecutionTimes) {
        if let Some(request) = &self.request {
            request.observe(total);
        }
        self.queue.observe(times.queue);
        self.compute_input.observe(times.compute_input);
        self.compute_infer.observe(times.compute_infer);
        self.compute_output.observe(times.compute_output);
    }

    /// Records a request the cache answered: its queue time and the lookup.
    pub fn observe_cache_hit(&self, queue: Duration, lookup: Duration) {
        self.queue.observe(queue);
        if let Some(hit) = &self.cache_hit {
            hit.observe(lookup);
        }
    }

    /// Records a miss's lookup and insert time.
    pub fn observe_cache_miss(&self, duration: Duration) {
        if let Some(miss) = &self.cache_miss {
            miss.observe(duration);
        }
    }

    pub fn snapshot(&self) -> SummariesSnapshot {
        let t = &self.targets;
        SummariesSnapshot {
            request: self.request.as_ref().map(|s| s.snapshot(t)),
            queue: self.queue.snapshot(t),
            compute_input: self.compute_input.snapshot(t),
            compute_infer: self.compute_infer.snapshot(t),
            compute_output: self.compute_output.snapshot(t),
            cache_hit: self.cache_hit.as_ref().map(|s| s.snapshot(t)),
            cache_miss: self.cache_miss.as_ref().map(|s| s.snapshot(t)),
        }
    }
}
