//! One model instance: an ONNX Runtime session run on the instance's thread.

use std::sync::Arc;

use ort::session::Session;
use oxiserve_backend::{
    BackendRequest, BatchOutput, ComputeTiming, ModelInstance, execute_grouped,
};
use oxiserve_types::{Error, Result};

use crate::{inputs, outputs};

/// What every instance of a model knows about its tensors.
#[derive(Debug)]
pub(crate) struct Plan {
    pub model: String,
    /// Whether the first dimension of every tensor is the batch (max_batch_size > 0).
    pub batching: bool,
    pub outputs: Vec<String>,
}

pub(crate) struct OnnxInstance {
    pub session: Session,
    pub plan: Arc<Plan>,
}

impl ModelInstance for OnnxInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        let batching = self.plan.batching;
        execute_grouped(requests, batching, timing, |group| self.run(group));
    }
}

impl OnnxInstance {
    /// Runs one group of requests that fit in one tensor per input.
    fn run(&mut self, group: &[BackendRequest]) -> Result<Vec<BatchOutput>> {
        let names: Vec<String> = group[0]
            .request
            .inputs
            .iter()
            .map(|t| t.name.clone())
            .collect();
        let feeds = inputs::gather(self.session.allocator(), &names, group, self.plan.batching)?;
        let wanted: Vec<&String> = self
            .plan
            .outputs
            .iter()
            .filter(|o| group.iter().any(|r| r.wants_output(o)))
            .collect();
        let mut results = self
            .session
            .run(feeds)
            .map_err(|e| Error::internal(format!("onnx runtime error {}: {e}", self.plan.model)))?;
        wanted
            .into_iter()
            .map(|name| {
                let value = results.remove(name.as_str()).ok_or_else(|| {
                    Error::internal(format!(
                        "onnxruntime: model '{}' produced no output '{name}'",
                        self.plan.model
                    ))
                })?;
                outputs::take(name, value)
            })
            .collect()
    }
}
