//! What a scrape reads of the custom metrics: each family and its metrics
//! at one moment.

use super::{MetricKind, SampleValue};

/// One family at one moment, for a scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilySnapshot {
    pub name: String,
    pub help: String,
    pub kind: MetricKind,
    /// Sorted by labels; never empty.
    pub metrics: Vec<MetricSnapshot>,
}

/// One metric of a family at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSnapshot {
    /// Sorted by name.
    pub labels: Vec<(String, String)>,
    pub value: SampleValue,
}
