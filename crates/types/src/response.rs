//! An inference response as the core produces it.

use crate::{parameters::Parameters, tensor::Tensor};

/// One response to an inference request. Decoupled models may send several.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InferResponse {
    pub model_name: String,
    pub model_version: i64,
    /// The request's id, echoed.
    pub id: String,
    pub outputs: Vec<Tensor>,
    pub parameters: Parameters,
}
