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
    early.finished(true);
    assert_eq!(stats.snapshot("m", 1).inference_stats.success.count, 0);
    early.executed(times(1));
    let late = RequestRecord::new(stats.clone(), Instant::now());
    late.executed(times(1));
    late.finished(true);
    late.finished(true);
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
    record.finished(false);
    record.executed(times(1));
    let s = stats.snapshot("m", 1);
    assert_eq!(s.inference_stats.fail.count, 1);
    assert_eq!(s.inference_stats.success.count, 0);
    assert_eq!(s.inference_stats.queue.count, 0);
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
