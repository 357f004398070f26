//! The model repository extension: index, load, unload. Loads and unloads
//! block, so they run off the async workers.

use std::collections::HashMap;

use oxiserve_core::{
    IndexEntry, Server,
    repository::{FILE_PREFIX, LoadRequest},
};
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

/// `RepositoryModelLoad`, with Triton's parameters `config` (string) and
/// `file:<path>` (bytes), and our `version` (int64 or string).
pub(crate) async fn load(
    server: &Server,
    request: RepositoryModelLoadRequest,
) -> Result<(), Status> {
    check_repository_name(&request.repository_name).map_err(status)?;
    let model = request.model_name;
    let load = load_request(&request.parameters).map_err(status)?;
    let server = server.clone();
    tokio::task::spawn_blocking(move || server.load_model_with(&model, &load))
        .await
        .map_err(join_error)?
        .map_err(status)
}

/// `RepositoryModelUnload`; `unload_dependents` must be a bool.
pub(crate) async fn unload(
    server: &Server,
    request: RepositoryModelUnloadRequest,
) -> Result<(), Status> {
    check_repository_name(&request.repository_name).map_err(status)?;
    let dependents = match request.parameters.get("unload_dependents") {
        None => false,
        Some(ModelRepositoryParameter {
            parameter_choice: Some(ParameterChoice::BoolParam(b)),
        }) => *b,
        Some(_) => {
            return Err(status(Error::invalid_arg(
                "invalid value type for 'unload_dependents' parameter, expected bool_param.",
            )));
        }
    };
    let server = server.clone();
    let model = request.model_name;
    tokio::task::spawn_blocking(move || match dependents {
        true => server.unload_model_and_dependents(&model),
        false => server.unload_model(&model),
    })
    .await
    .map_err(join_error)?
    .map_err(status)
}

/// The load parameters, with Triton's type checks and messages.
fn load_request(parameters: &HashMap<String, ModelRepositoryParameter>) -> Result<LoadRequest> {
    let mut request = LoadRequest::default();
    for (key, value) in parameters {
        match (key.as_str(), &value.parameter_choice) {
            ("config", Some(ParameterChoice::StringParam(config))) => {
                request.config = Some(config.clone());
            }
            ("config", _) => return Err(wrong_type(key, "string_param")),
            (key, Some(ParameterChoice::BytesParam(contents))) if key.starts_with(FILE_PREFIX) => {
                let path = &key[FILE_PREFIX.len()..];
                request
                    .files
                    .push((path.to_string(), contents.clone().into()));
            }
            (key, _) if key.starts_with(FILE_PREFIX) => {
                return Err(wrong_type(key, "bytes_param"));
            }
            ("version", Some(ParameterChoice::Int64Param(version))) => {
                request.version = Some(*version);
            }
            ("version", Some(ParameterChoice::StringParam(text))) => {
                request.version = Some(text.parse().map_err(|_| {
                    Error::invalid_arg(format!(
                        "load parameter 'version' must be a version number, not '{text}'"
                    ))
                })?);
            }
            ("version", _) => return Err(wrong_type(key, "int64_param")),
            _ => {
                return Err(Error::invalid_arg(format!(
                    "unrecognized load parameter '{key}'."
                )));
            }
        }
    }
    Ok(request)
}

fn wrong_type(key: &str, wanted: &str) -> Error {
    Error::invalid_arg(format!(
        "invalid value type for load parameter '{key}', expected {wanted}."
    ))
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
