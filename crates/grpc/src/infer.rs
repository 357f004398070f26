//! `ModelInfer`: one request, one response. If the client goes away or its
//! deadline passes first, tonic drops this future and with it the response
//! stream, which cancels the request.

use oxiserve_core::Server;
use oxiserve_proto::inference::{ModelInferRequest, ModelInferResponse};
use oxiserve_types::{Error, ErrorKind, Result};

use crate::{
    convert::{request, response},
    version,
};

/// Runs one inference on a model that is not decoupled.
pub(crate) async fn model_infer(
    server: &Server,
    message: ModelInferRequest,
) -> Result<ModelInferResponse> {
    // Triton's order: the version, the model, its transaction policy, then
    // the request itself.
    let version = version::parse(&message.model_version)?;
    let model = server.model(&message.model_name, version)?;
    if model.is_decoupled() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "ModelInfer RPC doesn't support models with decoupled transaction policy",
        ));
    }
    let decoded = request::decode(message)?;
    let reply = server.infer_on(&model, decoded.request)?.single().await?;
    Ok(response::encode(reply))
}
