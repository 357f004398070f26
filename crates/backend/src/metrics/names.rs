//! Prometheus' rules for metric and label names, as Triton's prometheus-cpp
//! applies them: `[a-zA-Z_:][a-zA-Z0-9_:]*` for metrics, `[a-zA-Z_][a-zA-Z0-9_]*`
//! for labels, and neither may start with `__` (reserved).

/// Whether `name` may name a metric family.
pub(super) fn is_metric_name(name: &str) -> bool {
    starts_well(name)
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// Whether `name` may name a label.
pub(super) fn is_label_name(name: &str) -> bool {
    starts_well(name) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn starts_well(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| !b.is_ascii_digit()) && !name.starts_with("__")
}
