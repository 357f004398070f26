//! One model instance: forward() of the model's module run without
//! gradients on the instance's thread, with the instance's own intra-op
//! thread count.

use std::sync::Arc;

use oxiserve_backend::{
    BackendRequest, BatchOutput, ComputeTiming, ModelInstance, execute_grouped,
};
use oxiserve_types::{Error, Result};
use tch::CModule;

use crate::{errors, inputs, outputs, plan::Plan};

pub(crate) struct TorchInstance {
    /// Shared by every instance of the model: forward() only reads it.
    pub module: Arc<CModule>,
    pub plan: Arc<Plan>,
}

impl ModelInstance for TorchInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        tch::jit::set_graph_executor_optimize(self.plan.params.optimized_execution);
        let batching = self.plan.batching;
        execute_grouped(requests, batching, timing, |group| {
            tch::no_grad(|| self.run(group))
        });
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
}
