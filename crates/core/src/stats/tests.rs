use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use super::*;

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
    early.executed(times(1));
    let late = RequestRecord::new(stats.clone(), Instant::now());
    late.executed(times(1));
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
    record.executed(times(1));
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
    off.record_success(Duration::from_micros(10), &times(1));
    assert_eq!(off.latency(), None);

    let on = Arc::new(StatsCollector::new(true));
    for us in [40, 50, 51, 2_000, 100_000_000] {
        let record = RequestRecord::new(on.clone(), Instant::now());
        record.executed(times(0));
        record.finished(None);
        on.record_success(Duration::from_micros(us), &times(0));
    }
    let h = on.latency().unwrap();
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
    assert!(h.request.sum_us >= 100_002_141);
    assert_eq!(h.queue.count(), 10);
    assert_eq!(h.queue.sum_us, 0);
}

#[test]
fn executions_count_inferences_and_batch_sizes() {
    let stats = StatsCollector::default();
    stats.record_execution(4, &times(1));
    stats.record_execution(4, &times(1));
    stats.record_execution(1, &times(1));
    let s = stats.snapshot("m", 3);
    assert_eq!((s.inference_count, s.execution_count), (9, 3));
    let sizes: Vec<_> = s
        .batch_stats
        .iter()
        .map(|b| (b.batch_size, b.compute_infer.count))
        .collect();
    assert_eq!(sizes, vec![(1, 1), (4, 2)]);
    assert_eq!(s.version, 3);
}
