use super::*;

fn number(family: &std::sync::Arc<MetricFamily>, labels: &[(&str, &str)]) -> f64 {
    let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    let metric = family.metric(labels, None).unwrap();
    let value = metric.value().unwrap();
    metric.delete();
    value
}

#[test]
fn families_are_registered_once_with_their_first_description() {
    let registry = CustomMetrics::default();
    let first = registry
        .family("requests", "first", MetricKind::Counter)
        .unwrap();
    let again = registry
        .family("requests", "second", MetricKind::Counter)
        .unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    assert_eq!(again.help(), "first");
    let other = registry
        .family("requests", "x", MetricKind::Gauge)
        .unwrap_err();
    assert_eq!(
        other.message,
        "Family name already exists with different type"
    );
    assert!(registry.get("requests").is_some());
    assert!(registry.get("nothing").is_none());
}

#[test]
fn names_follow_prometheus_rules() {
    let registry = CustomMetrics::default();
    for good in ["a", "_a", "a:b_9", "A"] {
        registry.family(good, "", MetricKind::Gauge).unwrap();
    }
    for bad in ["", "1a", "__a", "a b", "a-b", "é"] {
        let e = registry.family(bad, "", MetricKind::Gauge).unwrap_err();
        assert_eq!(e.message, "Invalid metric name", "{bad:?}");
    }
    let family = registry.family("labelled", "", MetricKind::Gauge).unwrap();
    for bad in ["", "1a", "__a", "a:b", "a b"] {
        let e = family
            .metric([(bad.to_string(), "v".to_string())], None)
            .unwrap_err();
        assert_eq!(e.message, "Invalid label name", "{bad:?}");
    }
    assert!(
        registry.snapshot().is_empty(),
        "a family without metrics is not shown"
    );
}

#[test]
fn holders_of_the_same_labels_share_one_metric_until_the_last_deletes_it() {
    let registry = CustomMetrics::default();
    let family = registry.family("c", "help", MetricKind::Counter).unwrap();
    let labels = || {
        [
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
        ]
    };
    let one = family.metric(labels(), None).unwrap();
    let two = family.metric(labels(), None).unwrap();
    one.increment(2.5).unwrap();
    assert_eq!(two.value().unwrap(), 2.5);
    one.delete();
    let snapshot = registry.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot[0].metrics[0].labels[0], ("a".into(), "1".into()));
    assert_eq!(snapshot[0].metrics[0].value, SampleValue::Number(2.5));
    two.delete();
    assert!(registry.snapshot().is_empty());
    assert_eq!(number(&family, &[("a", "1"), ("b", "2")]), 0.0);
}

#[test]
fn a_metric_dropped_without_delete_stays() {
    let registry = CustomMetrics::default();
    let family = registry.family("g", "", MetricKind::Gauge).unwrap();
    family.metric([], None).unwrap().set(7.0).unwrap();
    assert_eq!(number(&family, &[]), 7.0);
    assert_eq!(registry.snapshot().len(), 1);
}

#[test]
fn operations_follow_the_kind_with_tritons_errors() {
    let registry = CustomMetrics::default();
    let counter = registry.family("c", "", MetricKind::Counter).unwrap();
    let counter = counter.metric([], None).unwrap();
    assert_eq!(
        counter.increment(-1.0).unwrap_err().message,
        "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by \
         non-negative values."
    );
    assert_eq!(
        counter.set(1.0).unwrap_err().message,
        "TRITONSERVER_METRIC_KIND_COUNTER does not support Set"
    );
    assert_eq!(
        counter.observe(1.0).unwrap_err().message,
        "TRITONSERVER_METRIC_KIND_COUNTER does not support Observe"
    );
    let gauge = registry.family("g", "", MetricKind::Gauge).unwrap();
    let gauge = gauge.metric([], None).unwrap();
    gauge.increment(-2.0).unwrap();
    assert_eq!(gauge.value().unwrap(), -2.0);
    assert_eq!(
        gauge.observe(1.0).unwrap_err().message,
        "TRITONSERVER_METRIC_KIND_GAUGE does not support Observe"
    );
    let histogram = registry.family("h", "", MetricKind::Histogram).unwrap();
    assert_eq!(
        histogram.metric([], None).unwrap_err().message,
        "Bucket boundaries not found in Metric args."
    );
    assert_eq!(
        histogram.metric([], Some(&[1.0, 1.0])).unwrap_err().message,
        "Bucket Boundaries must be strictly sorted"
    );
    let histogram = histogram.metric([], Some(&[0.1, 1.0, 2.5])).unwrap();
    for (op, message) in [
        (histogram.increment(1.0), "Increment"),
        (histogram.set(1.0), "Set"),
        (histogram.value().map(|_| ()), "Value"),
    ] {
        let expected = format!("TRITONSERVER_METRIC_KIND_HISTOGRAM does not support {message}");
        assert_eq!(op.unwrap_err().message, expected);
    }
    for v in [0.05, 0.1, 1.5, 6.0] {
        histogram.observe(v).unwrap();
    }
    let samples = registry.snapshot();
    let h = samples.iter().find(|f| f.name == "h").unwrap();
    assert_eq!(
        h.metrics[0].value,
        SampleValue::Histogram {
            bounds: vec![0.1, 1.0, 2.5],
            cumulative: vec![2, 2, 3],
            count: 4,
            sum: 7.65,
        }
    );
    let c = registry.family("c", "", MetricKind::Counter).unwrap();
    let other = [("new".to_string(), "labels".to_string())];
    assert_eq!(
        c.metric(other, Some(&[1.0])).unwrap_err().message,
        "Unexpected args found in counter Metric constructor."
    );
}
