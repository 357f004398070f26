//! `ModelInfer`: one request, one response. If the client goes away or its
//! deadline passes first, tonic drops this future and with it the response
//! stream, which cancels the request.

use std::time::Instant;

use oxiserve_core::Server;
use oxiserve_proto::inference::{ModelInferRequest, ModelInferResponse};
use oxiserve_types::{Error, ErrorKind, Parameters, Result};

use crate::{
    convert::{request, response},
    traced::{CallTrace, TraceContext},
    version,
};

/// Runs one inference on a model that is not decoupled (traced when
/// sampled; `context` is the call's W3C trace context), with the parameters
/// `forwarded` from its metadata.
pub(crate) async fn model_infer(
    server: &Server,
    context: TraceContext,
    forwarded: Parameters,
    message: ModelInferRequest,
) -> Result<ModelInferResponse> {
    let read_start = Instant::now();
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
    let mut decoded = request::decode(message)?;
    with_forwarded(&mut decoded.request.parameters, forwarded);
    let call = CallTrace::sample(server, model.name(), &context, read_start);
    let trace = call.as_ref().map(CallTrace::trace);
    let reply = server.infer_traced(&model, decoded.request, trace)?;
    let reply = reply.single().await?;
    let Some(call) = call else {
        return Ok(response::encode(reply));
    };
    call.response_complete();
    let send_start = Instant::now();
    let encoded = response::encode(reply);
    call.sent(send_start);
    Ok(encoded)
}

/// Adds the parameters forwarded from a call's metadata to a request's own
/// (which win where both name one).
pub(crate) fn with_forwarded(parameters: &mut Parameters, forwarded: Parameters) {
    for (name, value) in forwarded {
        parameters.entry(name).or_insert(value);
    }
}
