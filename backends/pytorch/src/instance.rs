//! One model instance: forward() of the model's module run without
//! gradients on the instance's thread, with the instance's own intra-op
//! thread count.

use std::sync::Arc;

use oxiserve_backend::{BackendRequest, BackendResponse, ComputeTiming, ModelInstance};
use oxiserve_types::{Error, ErrorKind, Result};
use tch::CModule;

use crate::{
    errors, inputs,
    outputs::{self, BatchOutput},
    plan::Plan,
};

pub(crate) struct TorchInstance {
    /// Shared by every instance of the model: forward() only reads it.
    pub module: Arc<CModule>,
    pub plan: Arc<Plan>,
}

impl ModelInstance for TorchInstance {
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
        tch::jit::set_graph_executor_optimize(self.plan.params.optimized_execution);
        let mut done = Vec::new();
        for group in groups(live, self.plan.batching) {
            let result = tch::no_grad(|| self.run(&group));
            done.push((group, result));
        }
        timing.end_compute();
        for (group, result) in done {
            self.answer(group, result);
        }
    }
}

impl TorchInstance {
    /// Runs one group of requests that fit in one tensor per input.
    fn run(&self, group: &[BackendRequest]) -> Result<Vec<BatchOutput>> {
        let arguments = inputs::gather(&self.plan, group)?;
        let result = self.module.forward_is(&arguments).map_err(|e| {
            Error::internal(format!(
                "PyTorch execute failure: model '{}': {}",
                self.plan.model,
                errors::message(&e)
            ))
        })?;
        let rows = self
            .plan
            .batching
            .then(|| group.iter().map(BackendRequest::batch_size).sum());
        outputs::collect(&self.plan, result, rows)
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
