//! The model repository extension: index, load, unload. Loads and unloads
//! block, so they run off the async workers.

use oxiserve_core::{IndexEntry, Server};
use oxiserve_proto::inference::{
    ModelRepositoryParameter, RepositoryIndexRequest, RepositoryIndexResponse,
    RepositoryModelLoadRequest, RepositoryModelUnloadRequest,
    model_repository_parameter::ParameterChoice, repository_index_response::ModelIndex,
};
use oxiserve_types::{Error, ErrorKind, Result};
use tonic::Status;

use crate::error::{join_error, status};

/// `RepositoryIndex`
pub(crate) async fn index(
    server: &Server,
    request: RepositoryIndexRequest,
) -> Result<RepositoryIndexResponse, Status> {
    check_repository_name(&request.repository_name).map_err(status)?;
    let server = server.clone();
    let index = tokio::task::spawn_blocking(move || server.repository_index(request.ready))
        .await
        .map_err(join_error)?;
    Ok(RepositoryIndexResponse {
        models: index.into_iter().map(row).collect(),
    })
}

/// `RepositoryModelLoad`, with Triton's checks of the parameters.
pub(crate) async fn load(
    server: &Server,
    request: RepositoryModelLoadRequest,
) -> Result<(), Status> {
    check_repository_name(&request.repository_name).map_err(status)?;
    let model = request.model_name;
    if let Some((key, value)) = request.parameters.iter().next() {
        return Err(status(load_parameter_error(&model, key, value)));
    }
    let server = server.clone();
    tokio::task::spawn_blocking(move || server.load_model(&model))
        .await
        .map_err(join_error)?
        .map_err(status)
}

/// `RepositoryModelUnload`; `unload_dependents` must be a bool (no model
/// depends on another until ensembles exist).
pub(crate) async fn unload(
    server: &Server,
    request: RepositoryModelUnloadRequest,
) -> Result<(), Status> {
    check_repository_name(&request.repository_name).map_err(status)?;
    if let Some(ModelRepositoryParameter { parameter_choice }) =
        request.parameters.get("unload_dependents")
        && !matches!(parameter_choice, Some(ParameterChoice::BoolParam(_)))
    {
        return Err(status(Error::invalid_arg(
            "invalid value type for 'unload_dependents' parameter, expected bool_param.",
        )));
    }
    let server = server.clone();
    let model = request.model_name;
    tokio::task::spawn_blocking(move || server.unload_model(&model))
        .await
        .map_err(join_error)?
        .map_err(status)
}

/// Why a load with parameter `key` fails: its type is wrong, it is not a
/// load parameter, or (for `config` and `file:...`) it is not supported yet.
fn load_parameter_error(model: &str, key: &str, value: &ModelRepositoryParameter) -> Error {
    let (wanted, right_type) = match (key, &value.parameter_choice) {
        ("config", choice) => (
            "string_param",
            matches!(choice, Some(ParameterChoice::StringParam(_))),
        ),
        (key, choice) if key.starts_with("file:") => (
            "bytes_param",
            matches!(choice, Some(ParameterChoice::BytesParam(_))),
        ),
        _ => return Error::invalid_arg(format!("unrecognized load parameter '{key}'.")),
    };
    if !right_type {
        return Error::invalid_arg(format!(
            "invalid value type for load parameter '{key}', expected {wanted}."
        ));
    }
    Error::new(
        ErrorKind::Unsupported,
        format!("load of '{model}' with the '{key}' parameter is not supported yet"),
    )
}

fn check_repository_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::Unsupported,
        "'repository_name' specification is not supported",
    ))
}

fn row(entry: IndexEntry) -> ModelIndex {
    ModelIndex {
        name: entry.name,
        version: entry.version.map(|v| v.to_string()).unwrap_or_default(),
        state: entry.state.map(|s| s.to_string()).unwrap_or_default(),
        reason: entry.reason,
    }
}
