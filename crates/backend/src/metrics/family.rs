//! A metric family and the metrics in it, each shared by its holders.

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use super::{MetricKind, MetricSnapshot, names, value::MetricValue};

/// A metric's labels, sorted by name (as they are printed).
type Labels = Vec<(String, String)>;

/// A registered family (`TRITONSERVER_MetricFamily`).
#[derive(Debug)]
pub struct MetricFamily {
    name: String,
    help: String,
    kind: MetricKind,
    metrics: Mutex<BTreeMap<Labels, Shared>>,
}

/// A metric and how many holders it has.
#[derive(Debug)]
struct Shared {
    value: Arc<MetricValue>,
    holders: usize,
}

impl MetricFamily {
    pub(super) fn new(name: &str, help: &str, kind: MetricKind) -> Self {
        Self {
            name: name.to_string(),
            help: help.to_string(),
            kind,
            metrics: Mutex::default(),
        }
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its description (the `# HELP` text): the first one registered.
    pub fn help(&self) -> &str {
        &self.help
    }

    /// Its kind.
    pub fn kind(&self) -> MetricKind {
        self.kind
    }

    /// The metric of these labels (`TRITONSERVER_MetricNew`): a new one,
    /// or the one other holders of the same labels share (whose buckets
    /// stay). Label names are distinct. A histogram needs `buckets`, other
    /// kinds take none.
    pub fn metric(
        self: &Arc<Self>,
        labels: impl IntoIterator<Item = (String, String)>,
        buckets: Option<&[f64]>,
    ) -> Result<Metric> {
        let mut labels: Labels = labels.into_iter().collect();
        labels.sort();
        let mut metrics = self.metrics.lock();
        let value = match metrics.get_mut(&labels) {
            Some(shared) => {
                shared.holders += 1;
                shared.value.clone()
            }
            None => {
                let value = Arc::new(MetricValue::new(self.kind, buckets)?);
                if !labels.iter().all(|(name, _)| names::is_label_name(name)) {
                    return Err(Error::invalid_arg("Invalid label name"));
                }
                let shared = Shared {
                    value: value.clone(),
                    holders: 1,
                };
                metrics.insert(labels.clone(), shared);
                value
            }
        };
        Ok(Metric {
            family: self.clone(),
            labels,
            value,
        })
    }

    /// Its metrics now, sorted by labels.
    pub(super) fn samples(&self) -> Vec<MetricSnapshot> {
        self.metrics
            .lock()
            .iter()
            .map(|(labels, shared)| MetricSnapshot {
                labels: labels.clone(),
                value: shared.value.sample(),
            })
            .collect()
    }

    fn release(&self, labels: &Labels) {
        let mut metrics = self.metrics.lock();
        if let Some(shared) = metrics.get_mut(labels) {
            shared.holders -= 1;
            if shared.holders == 0 {
                metrics.remove(labels);
            }
        }
    }
}

/// One holder of a metric (`TRITONSERVER_Metric`). Dropped without
/// [`Metric::delete`], the metric stays on `/metrics`, as a Python model's
/// metrics stay in Triton when its process ends without deleting them.
#[derive(Debug)]
pub struct Metric {
    family: Arc<MetricFamily>,
    labels: Labels,
    value: Arc<MetricValue>,
}

impl Metric {
    /// Adds `value`: counters and gauges (a counter never goes down).
    pub fn increment(&self, value: f64) -> Result<()> {
        self.value.increment(value)
    }

    /// Sets a gauge.
    pub fn set(&self, value: f64) -> Result<()> {
        self.value.set(value)
    }

    /// Observes `value` in a histogram.
    pub fn observe(&self, value: f64) -> Result<()> {
        self.value.observe(value)
    }

    /// A counter's or a gauge's value.
    pub fn value(&self) -> Result<f64> {
        self.value.value()
    }

    /// Lets go of the metric (`TRITONSERVER_MetricDelete`); it leaves
    /// `/metrics` with its last holder.
    pub fn delete(self) {
        self.family.release(&self.labels);
    }
}
