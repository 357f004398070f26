//! Server metadata, model metadata and model configuration.

use axum::{
    extract::{Path, State},
    response::Response,
};
use serde_json::json;

use super::{ModelPath, json_response};
use crate::{app::App, error::ApiResult};

/// Protocol extensions this frontend implements.
pub const EXTENSIONS: &[&str] = &[
    "classification",
    "model_repository",
    "model_repository(unload_dependents)",
    "model_configuration",
    "system_shared_memory",
    "cuda_shared_memory",
    "binary_tensor_data",
    "parameters",
    "statistics",
    "trace",
    "logging",
];

/// `GET /v2`
pub(crate) async fn server(State(app): State<App>) -> Response {
    json_response(&json!({
        "name": app.server.config().id,
        "version": env!("CARGO_PKG_VERSION"),
        "extensions": EXTENSIONS,
    }))
}

/// `GET /v2/models/{model}[/versions/{version}]`
pub(crate) async fn model(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
) -> ApiResult<Response> {
    let metadata = app.server.model_metadata(&path.model, path.version()?)?;
    let tensors = |tensors: &[oxiserve_core::TensorMetadata]| {
        tensors
            .iter()
            .map(|t| json!({ "name": t.name, "datatype": t.datatype, "shape": t.shape }))
            .collect::<Vec<_>>()
    };
    Ok(json_response(&json!({
        "name": metadata.name,
        "versions": metadata.versions,
        "platform": metadata.platform,
        "inputs": tensors(&metadata.inputs),
        "outputs": tensors(&metadata.outputs),
    })))
}

/// `GET /v2/models/{model}[/versions/{version}]/config`
pub(crate) async fn config(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
) -> ApiResult<Response> {
    let config = app.server.model_config(&path.model, path.version()?)?;
    Ok(json_response(&oxiserve_config::to_json(&config)))
}
