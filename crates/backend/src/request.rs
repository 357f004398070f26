//! A request as an instance receives it.

use oxiserve_trace::Trace;
use oxiserve_types::{InferRequest, Tensor};

use crate::sink::ResponseSink;

/// Request parameters that Triton makes request fields (correlation id,
/// sequence flags, priority, timeout, output encoding): backends never see
/// them as parameters.
pub const REQUEST_FIELD_PARAMETERS: &[&str] = &[
    "sequence_id",
    "sequence_start",
    "sequence_end",
    "priority",
    "timeout",
    "binary_data_output",
];

/// A validated request: inputs already checked against the model's
/// configuration (and reshaped as it says), the outputs to produce resolved,
/// and the sink to answer through.
#[derive(Debug)]
pub struct BackendRequest {
    pub request: InferRequest,
    /// Names of the outputs to produce: those asked for, or all of them.
    pub requested_outputs: Vec<String>,
    pub sink: ResponseSink,
    /// The request's trace when it is traced: a request the backend makes
    /// for it (a BLS call) passes on a child of it.
    pub trace: Option<Trace>,
}

impl BackendRequest {
    /// The input called `name`.
    pub fn input(&self, name: &str) -> Option<&Tensor> {
        self.request.input(name)
    }

    /// Whether the output `name` should be produced.
    pub fn wants_output(&self, name: &str) -> bool {
        self.requested_outputs.iter().any(|o| o == name)
    }

    /// The batch size: the first dimension of the first input, or 1.
    pub fn batch_size(&self) -> usize {
        self.request
            .inputs
            .first()
            .and_then(|t| t.batch_size())
            .unwrap_or(1)
    }
}
