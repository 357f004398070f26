//! One model instance: an ONNX Runtime session run on the instance's thread.

use std::sync::Arc;

use ort::session::Session;
use oxiserve_backend::{BackendRequest, BackendResponse, ComputeTiming, ModelInstance};
use oxiserve_types::{Error, ErrorKind, Result};

use crate::{inputs, outputs::BatchOutput};

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
        for group in groups(live, self.plan.batching) {
            let result = self.run(&group);
            done.push((group, result));
        }
        timing.end_compute();
        for (group, result) in done {
            self.answer(group, result);
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
                BatchOutput::new(name, value)
            })
            .collect()
    }

    /// Sends each request its rows of the outputs, or the group's error.
    fn answer(&self, group: Vec<BackendRequest>, result: Result<Vec<BatchOutput>>) {
        let outputs = match result {
            Ok(outputs) => outputs,
            Err(error) => {
                for request in group {
                    request.sink.respond(Err(error.clone()));
                }
                return;
            }
        };
        let mut start = 0;
        for request in group {
            let rows = self.plan.batching.then(|| request.batch_size());
            let response = outputs
                .iter()
                .filter(|o| request.wants_output(o.name()))
                .map(|o| o.rows(start, rows))
                .collect::<Result<Vec<_>>>()
                .map(BackendResponse::new);
            start += rows.unwrap_or(0);
            request.sink.respond(response);
        }
    }
}

/// Splits a batch into runs of requests that can share one tensor per input:
/// the same inputs with the same shapes beyond the batch dimension. Without
/// batching every request runs alone.
fn groups(requests: Vec<BackendRequest>, batching: bool) -> Vec<Vec<BackendRequest>> {
    let mut groups: Vec<Vec<BackendRequest>> = Vec::new();
    for request in requests {
        let joins = batching
            && groups
                .last()
                .is_some_and(|group| same_layout(&group[0], &request));
        match groups.last_mut() {
            Some(group) if joins => group.push(request),
            _ => groups.push(vec![request]),
        }
    }
    groups
}

fn same_layout(a: &BackendRequest, b: &BackendRequest) -> bool {
    let (a, b) = (&a.request.inputs, &b.request.inputs);
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && x.datatype == y.datatype
                && x.shape.len() == y.shape.len()
                && x.shape.get(1..) == y.shape.get(1..)
        })
}
