//! Custom metrics: the families and metrics backends add to the server's
//! `/metrics` (Triton's `TRITONSERVER_MetricFamily` and `TRITONSERVER_Metric`
//! API, which Python models reach through `pb_utils.MetricFamily`).
//!
//! As in Triton, a family once registered stays for the server's life (its
//! first description and its kind with it); a metric is shared by every
//! holder of the same family and labels, and leaves `/metrics` when the last
//! holder deletes it. A family without metrics is not shown.

mod family;
mod names;
mod registry;
mod snapshot;
mod value;

pub use family::{Metric, MetricFamily};
pub use registry::CustomMetrics;
pub use snapshot::{FamilySnapshot, MetricSnapshot};
pub use value::SampleValue;

/// A family's type (`TRITONSERVER_MetricKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    Counter,
    Gauge,
    Histogram,
}

impl MetricKind {
    /// Triton's name of the kind, as its error messages spell it.
    pub(super) fn triton_name(self) -> &'static str {
        match self {
            Self::Counter => "TRITONSERVER_METRIC_KIND_COUNTER",
            Self::Gauge => "TRITONSERVER_METRIC_KIND_GAUGE",
            Self::Histogram => "TRITONSERVER_METRIC_KIND_HISTOGRAM",
        }
    }
}

#[cfg(test)]
mod tests;
