//! One model instance: a batch's requests fed to the session as one tensor
//! per input, and each configured output the batch asks for fetched.

use std::{collections::HashMap, sync::Arc};

use oxiserve_backend::{
    BackendRequest, BatchOutput, ComputeTiming, ModelInstance, execute_grouped,
};
use oxiserve_types::{Error, Result};

use crate::{
    capi::{Api, TF_Output},
    session::Session,
    tensor::Tensor,
};

/// What every instance of a model knows about its tensors.
#[derive(Debug)]
pub(crate) struct Plan {
    pub model: String,
    /// Whether the first dimension of every tensor is the batch (max_batch_size > 0).
    pub batching: bool,
    /// Triton name -> graph tensor, for every input the model has.
    pub inputs: HashMap<String, String>,
    /// The configured outputs: Triton name and graph tensor.
    pub outputs: Vec<(String, String)>,
}

/// The graph tensors of a plan in one session's graph.
struct Bound {
    inputs: HashMap<String, TF_Output>,
    outputs: Vec<TF_Output>,
}

// SAFETY: the operation pointers belong to the graph of the session the
// instance holds, which is alive and unchanged as long as they are.
unsafe impl Send for Bound {}

pub(crate) struct TfInstance {
    api: &'static Api,
    session: Arc<Session>,
    plan: Arc<Plan>,
    bound: Bound,
}

impl TfInstance {
    /// An instance running `session`, its tensors looked up once.
    pub(crate) fn new(api: &'static Api, session: Arc<Session>, plan: Arc<Plan>) -> Result<Self> {
        let lookup = |name: &str, tensor: &str| {
            session.output(tensor).ok_or_else(|| {
                Error::internal(format!(
                    "tensorflow: model '{}': tensor '{name}' ({tensor}) is not in the graph",
                    plan.model
                ))
            })
        };
        let inputs = plan
            .inputs
            .iter()
            .map(|(name, tensor)| Ok((name.clone(), lookup(name, tensor)?)))
            .collect::<Result<_>>()?;
        let outputs = plan
            .outputs
            .iter()
            .map(|(name, tensor)| lookup(name, tensor))
            .collect::<Result<_>>()?;
        Ok(Self {
            api,
            session,
            plan,
            bound: Bound { inputs, outputs },
        })
    }

    /// Runs one group of requests that fit in one tensor per input.
    fn run(&self, group: &[BackendRequest]) -> Result<Vec<BatchOutput>> {
        let model = &self.plan.model;
        let mut tensors = Vec::with_capacity(group[0].request.inputs.len());
        let mut feeds = Vec::with_capacity(tensors.capacity());
        for first in &group[0].request.inputs {
            let name = &first.name;
            let target = self.bound.inputs.get(name).ok_or_else(|| {
                Error::invalid_arg(format!("tensorflow: model '{model}' has no input '{name}'"))
            })?;
            let parts: Vec<_> = group
                .iter()
                .map(|r| {
                    r.input(name)
                        .expect("grouped requests carry the same inputs")
                })
                .collect();
            let mut shape = first.shape.clone();
            if self.plan.batching {
                shape[0] = parts.iter().map(|t| t.shape[0]).sum();
            }
            tensors.push(Tensor::gather(
                self.api,
                name,
                first.datatype,
                &shape,
                &parts,
            )?);
            feeds.push(*target);
        }
        let wanted: Vec<usize> = (0..self.plan.outputs.len())
            .filter(|&i| {
                group
                    .iter()
                    .any(|r| r.wants_output(&self.plan.outputs[i].0))
            })
            .collect();
        let fetches: Vec<TF_Output> = wanted.iter().map(|&i| self.bound.outputs[i]).collect();
        let feeds: Vec<(TF_Output, &Tensor)> = feeds.into_iter().zip(&tensors).collect();
        let results = self
            .session
            .run(&feeds, &fetches, &[])
            .map_err(|e| Error::internal(format!("tensorflow: model '{model}': {e}")))?;
        wanted
            .into_iter()
            .zip(results)
            .map(|(i, tensor)| tensor.into_output(&self.plan.outputs[i].0))
            .collect()
    }
}

impl ModelInstance for TfInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        let batching = self.plan.batching;
        execute_grouped(requests, batching, timing, |group| self.run(group));
    }
}
