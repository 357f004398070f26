//! Health, server and model metadata, and model configuration.

use oxiserve_core::{Server, TensorMetadata};
use oxiserve_proto::inference::{
    ModelConfigRequest, ModelConfigResponse, ModelMetadataRequest, ModelMetadataResponse,
    ModelReadyRequest, ModelReadyResponse, ServerMetadataResponse,
    model_metadata_response::TensorMetadata as ProtoTensor,
};
use oxiserve_types::Result;

use crate::version;

/// Protocol extensions the server implements, as `ServerMetadata` lists them
/// (the same list as over HTTP, in Triton's order).
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

/// `ModelReady`: a model (version) that is not ready, or not known, is
/// not ready; only a malformed version is an error.
pub(crate) fn model_ready(
    server: &Server,
    request: ModelReadyRequest,
) -> Result<ModelReadyResponse> {
    let version = version::parse(&request.version)?;
    Ok(ModelReadyResponse {
        ready: server.model_ready(&request.name, version),
    })
}

/// `ServerMetadata`
pub(crate) fn server_metadata(server: &Server) -> ServerMetadataResponse {
    ServerMetadataResponse {
        name: server.config().id.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        extensions: EXTENSIONS.iter().map(ToString::to_string).collect(),
    }
}

/// `ModelMetadata`
pub(crate) fn model_metadata(
    server: &Server,
    request: ModelMetadataRequest,
) -> Result<ModelMetadataResponse> {
    let version = version::parse(&request.version)?;
    let metadata = server.model_metadata(&request.name, version)?;
    let tensors = |tensors: Vec<TensorMetadata>| {
        tensors
            .into_iter()
            .map(|t| ProtoTensor {
                name: t.name,
                datatype: t.datatype,
                shape: t.shape,
            })
            .collect()
    };
    Ok(ModelMetadataResponse {
        name: metadata.name,
        versions: metadata.versions,
        platform: metadata.platform,
        inputs: tensors(metadata.inputs),
        outputs: tensors(metadata.outputs),
    })
}

/// `ModelConfig`: the complete configuration, as the core holds it.
pub(crate) fn model_config(
    server: &Server,
    request: ModelConfigRequest,
) -> Result<ModelConfigResponse> {
    let version = version::parse(&request.version)?;
    let config = server.model_config(&request.name, version)?;
    Ok(ModelConfigResponse {
        config: Some(config.as_ref().clone()),
    })
}
