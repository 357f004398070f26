//! An inference request as the core sees it, whatever protocol carried it.

use crate::{parameters::Parameters, tensor::Tensor};

/// One output the client asked for, with its per-output parameters
/// (`binary_data`, `class_count`, ...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestedOutput {
    pub name: String,
    /// Top-k classification instead of the raw tensor when > 0.
    pub class_count: u32,
    pub parameters: Parameters,
}

/// An inference request for one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InferRequest {
    pub model_name: String,
    /// The version asked for; `None` lets the version policy choose (the highest ready).
    pub model_version: Option<i64>,
    /// The client's request id, echoed in the response.
    pub id: String,
    pub inputs: Vec<Tensor>,
    /// The outputs asked for; empty means all of the model's outputs.
    pub outputs: Vec<RequestedOutput>,
    pub parameters: Parameters,
}

impl InferRequest {
    /// The input called `name`.
    pub fn input(&self, name: &str) -> Option<&Tensor> {
        self.inputs.iter().find(|t| t.name == name)
    }
}
