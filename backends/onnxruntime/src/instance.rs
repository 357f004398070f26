//! One model instance: an ONNX Runtime session run on the instance's thread.

use std::sync::Arc;

use ort::session::Session;
use oxiserve_backend::{
    BackendRequest, BatchOutput, ComputeTiming, ModelInstance, answer_group, group_by_layout,
};
use oxiserve_types::{Error, ErrorKind, Result};

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
        let mut live = Vec::with_capacity(requests.len());
        for request in requests {
            if request.sink.is_cancelled() {
                request.sink.respond(Err(Error::new(
                    ErrorKind::Cancelled,
                    "request was cancelled",
                )));
            } else {
                live.push(request);
            }
        }
        timing.start_compute();
        let mut done = Vec::new();
        for group in group_by_layout(live, self.plan.batching) {
            let result = self.run(&group);
            done.push((group, result));
        }
        timing.end_compute();
        for (group, result) in done {
            answer_group(group, result, self.plan.batching);
        }
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
