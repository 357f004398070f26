//! The server's custom metric families, by name, in registration order.

use std::sync::Arc;

use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use super::{FamilySnapshot, MetricFamily, MetricKind, names};

/// Every custom family of one server (Triton's metrics registry, for the
/// families backends add). Shared by the backends and `/metrics`.
#[derive(Debug, Default)]
pub struct CustomMetrics {
    families: Mutex<Vec<Arc<MetricFamily>>>,
}

impl CustomMetrics {
    /// The family `name` (`TRITONSERVER_MetricFamilyNew`): registered now,
    /// or earlier with the same kind (its first description stays).
    pub fn family(
        &self,
        name: &str,
        description: &str,
        kind: MetricKind,
    ) -> Result<Arc<MetricFamily>> {
        let mut families = self.families.lock();
        if let Some(family) = families.iter().find(|f| f.name() == name) {
            if family.kind() != kind {
                return Err(Error::invalid_arg(
                    "Family name already exists with different type",
                ));
            }
            return Ok(family.clone());
        }
        if !names::is_metric_name(name) {
            return Err(Error::invalid_arg("Invalid metric name"));
        }
        let family = Arc::new(MetricFamily::new(name, description, kind));
        families.push(family.clone());
        Ok(family)
    }

    /// The family registered as `name`, if any.
    pub fn get(&self, name: &str) -> Option<Arc<MetricFamily>> {
        self.families
            .lock()
            .iter()
            .find(|f| f.name() == name)
            .cloned()
    }

    /// The families that have metrics, in registration order.
    pub fn snapshot(&self) -> Vec<FamilySnapshot> {
        let families = self.families.lock().clone();
        families
            .iter()
            .map(|f| FamilySnapshot {
                name: f.name().to_string(),
                help: f.help().to_string(),
                kind: f.kind(),
                metrics: f.samples(),
            })
            .filter(|f| !f.metrics.is_empty())
            .collect()
    }
}
