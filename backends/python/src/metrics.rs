//! The custom metrics of one stub process (`pb_utils.MetricFamily` and
//! `Metric`): its metric frames applied to the server's registry, with the
//! metrics it holds by the ids it gave them.
//!
//! When the process ends (the model unloads, or the process is replaced),
//! the metrics it still holds are deleted: a model's metrics go with it.
//! (Triton 2.51's stub deletes nothing on its way out, so there they stay
//! on `/metrics`, frozen, and a reload continues them.)

use std::{collections::HashMap, sync::Arc};

use oxiserve_backend::metrics::{CustomMetrics, Metric};
use oxiserve_types::{Error, Result};
use serde_json::Value;

use crate::protocol::{MetricCall, MetricOp, ToStub};

/// One process's metrics.
pub(crate) struct StubMetrics {
    registry: Arc<CustomMetrics>,
    held: HashMap<u64, Metric>,
}

impl Drop for StubMetrics {
    fn drop(&mut self) {
        for (_, metric) in self.held.drain() {
            metric.delete();
        }
    }
}

impl StubMetrics {
    pub fn new(registry: Arc<CustomMetrics>) -> Self {
        Self {
            registry,
            held: HashMap::new(),
        }
    }

    /// Applies one call; the reply to send, when it asks for one. `instance`
    /// names the process in what is logged.
    pub fn handle(&mut self, call: MetricCall, instance: &str) -> Option<ToStub> {
        match call {
            MetricCall::FamilyNew {
                call_id,
                name,
                description,
                kind,
            } => {
                let result = self.registry.family(&name, &description, kind).map(|_| 0.0);
                Some(ToStub::MetricReply { call_id, result })
            }
            MetricCall::New {
                metric_id,
                family,
                labels_json,
                buckets,
            } => {
                let result = self
                    .create(&family, &labels_json, buckets.as_deref())
                    .map(|metric| {
                        self.held.insert(metric_id, metric);
                        0.0
                    });
                Some(ToStub::MetricReply {
                    call_id: metric_id,
                    result,
                })
            }
            MetricCall::Update {
                metric_id,
                op,
                value,
            } => {
                let done = self.metric(metric_id).and_then(|m| match op {
                    MetricOp::Increment => m.increment(value),
                    MetricOp::Set => m.set(value),
                    MetricOp::Observe => m.observe(value),
                });
                if let Err(e) = done {
                    log::warn!("{instance}: metric update ignored: {}", e.message);
                }
                None
            }
            MetricCall::Value { call_id, metric_id } => {
                let result = self.metric(metric_id).and_then(Metric::value);
                Some(ToStub::MetricReply { call_id, result })
            }
            MetricCall::Delete { metric_id } => {
                if let Some(metric) = self.held.remove(&metric_id) {
                    metric.delete();
                }
                None
            }
        }
    }

    fn create(&self, family: &str, labels_json: &str, buckets: Option<&[f64]>) -> Result<Metric> {
        let family = self
            .registry
            .get(family)
            .ok_or_else(|| Error::internal(format!("no metric family '{family}'")))?;
        family.metric(labels(labels_json)?, buckets)
    }

    fn metric(&self, metric_id: u64) -> Result<&Metric> {
        self.held
            .get(&metric_id)
            .ok_or_else(|| Error::internal(format!("no metric {metric_id}")))
    }
}

/// The labels of `json.dumps(labels)`: an object of strings, or `null`
/// for none (Triton's words for a value that is not a string).
fn labels(json: &str) -> Result<Vec<(String, String)>> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| Error::invalid_arg(format!("labels are not JSON: {e}")))?;
    let object = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Object(object) => object,
        _ => return Err(Error::invalid_arg("labels must be a JSON object")),
    };
    object
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(value) => Ok((name, value)),
            _ => Err(Error::invalid_arg(
                "attempt to access JSON non-string as string",
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::metrics::{MetricKind, SampleValue};

    use super::*;

    fn reply(message: Option<ToStub>) -> Result<f64> {
        match message {
            Some(ToStub::MetricReply { result, .. }) => result,
            other => panic!("not a reply: {other:?}"),
        }
    }

    #[test]
    fn a_process_creates_updates_reads_and_deletes_metrics() {
        let registry = Arc::new(CustomMetrics::default());
        let mut metrics = StubMetrics::new(registry.clone());
        let family = MetricCall::FamilyNew {
            call_id: 1,
            name: "hits".into(),
            description: "d".into(),
            kind: MetricKind::Counter,
        };
        assert_eq!(reply(metrics.handle(family, "m_0")), Ok(0.0));
        let new = |metric_id, labels_json: &str| MetricCall::New {
            metric_id,
            family: "hits".into(),
            labels_json: labels_json.into(),
            buckets: None,
        };
        assert_eq!(
            reply(metrics.handle(new(2, r#"{"b": "2", "a": "1"}"#), "m_0")),
            Ok(0.0)
        );
        assert_eq!(reply(metrics.handle(new(3, "null"), "m_0")), Ok(0.0));
        let bad = reply(metrics.handle(new(4, r#"{"a": 5}"#), "m_0")).unwrap_err();
        assert_eq!(bad.message, "attempt to access JSON non-string as string");
        let update = MetricCall::Update {
            metric_id: 2,
            op: MetricOp::Increment,
            value: 1.5,
        };
        assert!(metrics.handle(update, "m_0").is_none());
        let value = MetricCall::Value {
            call_id: 5,
            metric_id: 2,
        };
        assert_eq!(reply(metrics.handle(value, "m_0")), Ok(1.5));
        let families = registry.snapshot();
        let labels: Vec<_> = families[0]
            .metrics
            .iter()
            .map(|m| m.labels.clone())
            .collect();
        assert_eq!(
            labels,
            [
                vec![],
                vec![("a".into(), "1".into()), ("b".into(), "2".into())]
            ]
        );
        assert_eq!(families[0].metrics[1].value, SampleValue::Number(1.5));
        assert!(
            metrics
                .handle(MetricCall::Delete { metric_id: 2 }, "m_0")
                .is_none()
        );
        assert_eq!(registry.snapshot()[0].metrics.len(), 1);
        drop(metrics);
        assert!(
            registry.snapshot().is_empty(),
            "the metrics a process still holds go when it ends"
        );
    }
}
