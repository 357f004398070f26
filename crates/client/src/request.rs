//! An inference request, the same for HTTP and gRPC.

use oxiserve_types::{ParameterValue, Parameters};

use crate::{input::InferInput, output::InferRequestedOutput};

/// An inference request: the model, its inputs, the outputs asked for and
/// the request parameters (sequence, priority, timeout, custom ones).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InferRequest {
    model: String,
    version: String,
    id: String,
    inputs: Vec<InferInput>,
    outputs: Vec<InferRequestedOutput>,
    parameters: Parameters,
}

impl InferRequest {
    /// A request for `model`'s version chosen by the server.
    pub fn new(model: &str) -> Self {
        InferRequest {
            model: model.into(),
            ..InferRequest::default()
        }
    }

    /// For this version of the model.
    pub fn version(mut self, version: &str) -> Self {
        self.version = version.into();
        self
    }

    /// With this request id, echoed in the response.
    pub fn id(mut self, id: &str) -> Self {
        self.id = id.into();
        self
    }

    /// With one more input.
    pub fn input(mut self, input: InferInput) -> Self {
        self.inputs.push(input);
        self
    }

    /// Asking for one more output (none asked: every output).
    pub fn output(mut self, output: InferRequestedOutput) -> Self {
        self.outputs.push(output);
        self
    }

    /// Part of sequence `id` (a sequence batcher's correlation id), maybe its
    /// first or last request.
    pub fn sequence(self, id: u64, start: bool, end: bool) -> Self {
        let id = i64::try_from(id).map_or(ParameterValue::Uint(id), ParameterValue::Int);
        self.parameter("sequence_id", id)
            .parameter("sequence_start", ParameterValue::Bool(start))
            .parameter("sequence_end", ParameterValue::Bool(end))
    }

    /// With a request parameter (`priority`, `timeout`,
    /// `triton_enable_empty_final_response`, or the model's own).
    pub fn parameter(mut self, key: &str, value: ParameterValue) -> Self {
        self.parameters.insert(key.into(), value);
        self
    }

    /// The model's name.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The model version asked for; empty: the server chooses.
    pub fn model_version(&self) -> &str {
        &self.version
    }

    /// The request id; may be empty.
    pub fn request_id(&self) -> &str {
        &self.id
    }

    /// The inputs.
    pub fn inputs(&self) -> &[InferInput] {
        &self.inputs
    }

    /// The outputs asked for.
    pub fn outputs(&self) -> &[InferRequestedOutput] {
        &self.outputs
    }

    /// The request parameters.
    pub fn parameters(&self) -> &Parameters {
        &self.parameters
    }
}
