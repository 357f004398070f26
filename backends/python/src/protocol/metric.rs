//! The custom metric frames (`pb_utils.MetricFamily` and `Metric` calls):
//! families are named, metrics numbered by the stub.

use oxiserve_backend::metrics::MetricKind;
use oxiserve_types::{Error, Result};

/// A metric frame from the stub. Creations and `value()` are answered with
/// a `MetricReply`; updates and deletions are not (the stub already checked
/// what Triton would refuse).
#[derive(Debug, Clone, PartialEq)]
pub enum MetricCall {
    /// `MetricFamily(name, description, kind)`.
    FamilyNew {
        call_id: u64,
        name: String,
        description: String,
        kind: MetricKind,
    },
    /// `family.Metric(labels, buckets)`: `labels_json` is `json.dumps(labels)`.
    New {
        metric_id: u64,
        family: String,
        labels_json: String,
        buckets: Option<Vec<f64>>,
    },
    /// `increment`, `set` or `observe`.
    Update {
        metric_id: u64,
        op: MetricOp,
        value: f64,
    },
    /// `value()`.
    Value { call_id: u64, metric_id: u64 },
    /// The `Metric` object was deleted (or its family was).
    Delete { metric_id: u64 },
}

/// What a `MetricUpdate` frame does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricOp {
    Increment,
    Set,
    Observe,
}

impl MetricOp {
    pub(super) fn from_code(code: u8) -> Result<Self> {
        Ok(match code {
            0 => Self::Increment,
            1 => Self::Set,
            2 => Self::Observe,
            _ => return Err(Error::internal(format!("unknown metric operation {code}"))),
        })
    }

    #[cfg(test)]
    pub(super) fn code(self) -> u8 {
        self as u8
    }
}

/// The kind of a `MetricFamilyNew` code (`pb_utils.MetricFamily.COUNTER` 0,
/// `GAUGE` 1, `HISTOGRAM` 2).
pub(super) fn kind_from_code(code: u8) -> Result<MetricKind> {
    Ok(match code {
        0 => MetricKind::Counter,
        1 => MetricKind::Gauge,
        2 => MetricKind::Histogram,
        _ => return Err(Error::internal(format!("unknown metric kind {code}"))),
    })
}

#[cfg(test)]
pub(super) fn kind_code(kind: MetricKind) -> u8 {
    match kind {
        MetricKind::Counter => 0,
        MetricKind::Gauge => 1,
        MetricKind::Histogram => 2,
    }
}
