use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use super::*;
use crate::config::DEFAULT_QUANTILES;

fn times(ms: u64) -> ExecutionTimes {
    ExecutionTimes {
        queue: Duration::from_millis(ms),
        compute_input: Duration::from_millis(ms),
        compute_infer: Duration::from_millis(2 * ms),
        compute_output: Duration::from_millis(ms),
    }
}

#[test]
fn success_is_recorded_once_both_halves_are_known() {
    let stats = Arc::new(StatsCollector::default());
    let early = RequestRecord::new(stats.clone(), Instant::now());
    early.finished(None);
    assert_eq!(stats.snapshot("m", 1).inference_stats.success.count, 0);
    early.executed(times(1), 1);
    let late = RequestRecord::new(stats.clone(), Instant::now());
    late.executed(times(1), 2);
    late.finished(None);
    late.finished(None);
    let s = stats.snapshot("m", 1);
    assert_eq!(s.inference_stats.success.count, 2);
    assert_eq!(s.inference_stats.queue.count, 2);
    assert_eq!(s.inference_stats.compute_infer.ns, 4_000_000);
    assert_eq!(s.inference_stats.fail.count, 0);
    assert!(s.last_inference > 0);
}

#[test]
fn failures_count_without_compute_times() {
    let stats = Arc::new(StatsCollector::default());
    let record = RequestRecord::new(stats.clone(), Instant::now());
    record.finished(Some(FailureReason::Canceled));
    record.executed(times(1), 1);
    let s = stats.snapshot("m", 1);
    assert_eq!(s.inference_stats.fail.count, 1);
    assert_eq!(s.inference_stats.success.count, 0);
    assert_eq!(s.inference_stats.queue.count, 0);
    assert_eq!(s.failures.get(FailureReason::Canceled), 1);
    assert_eq!(s.failures.get(FailureReason::Backend), 0);
}

#[test]
fn failures_are_counted_per_reason() {
    let stats = Arc::new(StatsCollector::default());
    for reason in [
        FailureReason::Backend,
        FailureReason::Backend,
        FailureReason::Other,
    ] {
        RequestRecord::new(stats.clone(), Instant::now()).finished(Some(reason));
    }
    let s = stats.snapshot("m", 1);
    let counts: Vec<_> = FailureReason::ALL
        .iter()
        .map(|r| (r.label(), s.failures.get(*r)))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("OTHER", 1),
            ("BACKEND", 2),
            ("CANCELED", 0),
            ("REJECTED", 0)
        ]
    );
    assert_eq!(s.inference_stats.fail.count, 3);
}

#[test]
fn histograms_follow_successes_and_can_be_off() {
    let off = StatsCollector::default();
    off.record_success(Duration::from_micros(10), &times(1), 1);
    assert_eq!(off.latency(), LatencyMetrics::default());

    let settings = StatsSettings {
        histograms: true,
        ..Default::default()
    };
    let on = Arc::new(StatsCollector::new(&settings, false, false));
    for us in [40, 50, 51, 2_000, 100_000_000] {
        let record = RequestRecord::new(on.clone(), Instant::now());
        record.executed(times(0), 1);
        record.finished(None);
        on.record_success(Duration::from_micros(us), &times(0), 1);
    }
    let h = on.latency().histograms.unwrap();
    // Five recorded by hand, five through records (a few µs each).
    assert_eq!(h.request.count(), 10);
    assert_eq!(
        h.request.count(),
        on.snapshot("m", 1).inference_stats.success.count
    );
    assert_eq!(h.request.cumulative.len(), LATENCY_BUCKETS_US.len() + 1);
    // 50 µs falls in the first bucket (le="50"), 51 µs in the second.
    assert!(h.request.cumulative[0] >= 2);
    assert_eq!(h.request.cumulative[LATENCY_BUCKETS_US.len() - 1], 9);
    assert!(h.request.sum >= 100_002_141);
    assert_eq!(h.queue.count(), 10);
    assert_eq!(h.queue.sum, 0);
}

#[test]
fn inferences_count_successful_requests_and_executions_every_batch() {
    let stats = Arc::new(StatsCollector::default());
    stats.record_execution(4, &times(1));
    stats.record_execution(4, &times(1));
    stats.record_execution(1, &times(1));
    for (batch_size, failure) in [(4, None), (3, Some(FailureReason::Backend)), (1, None)] {
        let record = RequestRecord::new(stats.clone(), Instant::now());
        record.executed(times(1), batch_size);
        record.finished(failure);
    }
    let s = stats.snapshot("m", 3);
    assert_eq!((s.inference_count, s.execution_count), (5, 3));
    let sizes: Vec<_> = s
        .batch_stats
        .iter()
        .map(|b| (b.batch_size, b.compute_infer.count))
        .collect();
    assert_eq!(sizes, vec![(1, 1), (4, 2)]);
    assert_eq!(s.version, 3);
}

#[test]
fn summaries_estimate_quantiles_of_successes() {
    let settings = StatsSettings {
        summaries: Some(DEFAULT_QUANTILES.into()),
        ..Default::default()
    };
    let stats = StatsCollector::new(&settings, false, false);
    let empty = stats.latency().summaries.unwrap();
    let request = empty.request.unwrap();
    assert_eq!(request.count, 0);
    assert!(request.estimates.iter().all(|(_, v)| v.is_nan()));
    assert!(empty.cache_hit.is_none() && empty.cache_miss.is_none());
    for us in 1..=1000 {
        stats.record_success(Duration::from_micros(us), &times(0), 1);
    }
    let s = stats.latency().summaries.unwrap();
    let request = s.request.unwrap();
    assert_eq!((request.count, request.sum), (1000, 500_500.0));
    let quantiles: Vec<f64> = request.estimates.iter().map(|(q, _)| *q).collect();
    assert_eq!(quantiles, [0.5, 0.9, 0.95, 0.99, 0.999]);
    for (q, estimate) in &request.estimates {
        let error = DEFAULT_QUANTILES
            .iter()
            .find(|t| t.quantile == *q)
            .unwrap()
            .error;
        let rank = estimate / 1000.0;
        assert!((rank - q).abs() <= error + 0.001, "{q}: {estimate}");
    }
    assert_eq!(s.queue.estimates[0], (0.5, 0.0));
    assert!(stats.latency().first_response.is_none());
}

#[test]
fn cached_models_summarise_hits_and_misses_but_not_requests() {
    let settings = StatsSettings {
        summaries: Some(DEFAULT_QUANTILES.into()),
        ..Default::default()
    };
    let stats = StatsCollector::new(&settings, false, true);
    stats.record_cache_hit(
        Duration::from_micros(50),
        Duration::from_micros(10),
        Duration::from_micros(20),
    );
    stats.record_success(Duration::from_micros(500), &times(0), 1);
    stats.record_cache_miss(Duration::from_micros(30));
    let s = stats.latency().summaries.unwrap();
    assert!(
        s.request.is_none(),
        "Triton has no request summary with the cache"
    );
    let (hit, miss) = (s.cache_hit.unwrap(), s.cache_miss.unwrap());
    assert_eq!((hit.count, hit.sum), (1, 20.0));
    assert_eq!((miss.count, miss.sum), (1, 30.0));
    assert_eq!(s.queue.count, 2, "hits count in the queue summary");
}

#[test]
fn the_first_response_histogram_is_for_decoupled_models() {
    let settings = StatsSettings {
        first_response: true,
        ..Default::default()
    };
    assert!(
        StatsCollector::new(&settings, false, false)
            .latency()
            .first_response
            .is_none()
    );
    let stats = Arc::new(StatsCollector::new(&settings, true, false));
    let record = RequestRecord::new(stats.clone(), Instant::now());
    record.responded();
    record.responded();
    let h = stats.latency().first_response.unwrap();
    assert_eq!(h.count(), 1);
    assert_eq!(h.cumulative.len(), FIRST_RESPONSE_BUCKETS_MS.len() + 1);
    assert_eq!(h.cumulative[0], 1, "within 100 ms");
}
