//! Entry point for the fuzz targets in `fuzz/` (feature `fuzzing`, off by
//! default): the conversion of a `ModelInferRequest` that otherwise runs
//! only inside the `ModelInfer` and `ModelStreamInfer` RPCs. Not part of
//! the API.

use oxiserve_proto::inference::ModelInferRequest;
use oxiserve_types::{InferRequest, Result};

/// Converts `message` into the core's request, as the inference RPCs do.
pub fn decode_infer_request(message: ModelInferRequest) -> Result<InferRequest> {
    crate::convert::request::decode(message).map(|decoded| decoded.request)
}
