//! The model repository extension: index, load, unload.

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use base64::{Engine, engine::general_purpose::STANDARD as BASE64};
use oxiserve_core::{
    IndexEntry,
    repository::{FILE_PREFIX, LoadRequest},
};
use oxiserve_types::Error;
use serde_json::{Map, Value, json};

use super::json_response;
use crate::{
    app::App,
    error::{ApiError, ApiResult},
};

/// `POST /v2/repository/index` with an optional `{"ready": bool}` body.
pub(crate) async fn index(State(app): State<App>, body: Bytes) -> ApiResult<Response> {
    let body = object(&body)?;
    let ready_only = match body.get("ready") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Error::internal("attempt to access JSON non-boolean as boolean").into());
        }
    };
    let server = app.server.clone();
    let index = tokio::task::spawn_blocking(move || server.repository_index(ready_only))
        .await
        .map_err(|e| Error::internal(e.to_string()))?;
    let rows: Vec<Value> = index.iter().map(index_json).collect();
    Ok(json_response(&Value::Array(rows)))
}

/// `POST /v2/repository/models/{model}/load`, with Triton's parameters
/// `config` (JSON text) and `file:<path>` (base64 contents), and our
/// `version` (serve only that version).
pub(crate) async fn load(
    State(app): State<App>,
    Path(model): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = object(&body)?;
    let request = match body.get("parameters") {
        Some(Value::Object(parameters)) => load_request(parameters)?,
        _ => LoadRequest::default(),
    };
    let server = app.server.clone();
    tokio::task::spawn_blocking(move || server.load_model_with(&model, &request))
        .await
        .map_err(|e| Error::internal(e.to_string()))??;
    Ok(StatusCode::OK.into_response())
}

/// `POST /v2/repository/models/{model}/unload`, with Triton's
/// `unload_dependents` parameter.
pub(crate) async fn unload(
    State(app): State<App>,
    Path(model): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = object(&body)?;
    // Like Triton, a value that is not a boolean counts as false and never
    // fails the unload.
    let dependents = matches!(
        body.get("parameters")
            .and_then(|p| p.get("unload_dependents")),
        Some(Value::Bool(true))
    );
    let server = app.server.clone();
    tokio::task::spawn_blocking(move || match dependents {
        true => server.unload_model_and_dependents(&model),
        false => server.unload_model(&model),
    })
    .await
    .map_err(|e| Error::internal(e.to_string()))??;
    Ok(StatusCode::OK.into_response())
}

/// The load parameters; like Triton, every value must be a string.
fn load_request(parameters: &Map<String, Value>) -> Result<LoadRequest, ApiError> {
    let mut request = LoadRequest::default();
    for (name, value) in parameters {
        let Value::String(text) = value else {
            return Err(Error::invalid_arg(format!(
                "load parameter '{name}' must be a string (file contents in base64)"
            ))
            .into());
        };
        if name == "config" {
            request.config = Some(text.clone());
        } else if let Some(path) = name.strip_prefix(FILE_PREFIX) {
            let contents = BASE64.decode(text).map_err(|e| {
                Error::invalid_arg(format!("load parameter '{name}' is not valid base64: {e}"))
            })?;
            request.files.push((path.to_string(), contents.into()));
        } else if name == "version" {
            let version = text.parse::<i64>().map_err(|_| {
                Error::invalid_arg(format!(
                    "load parameter 'version' must be a version number, not '{text}'"
                ))
            })?;
            request.version = Some(version);
        } else {
            return Err(Error::invalid_arg(format!(
                "unrecognized load parameter '{name}'; the load parameters are 'config', \
                 'file:<path>' and 'version'"
            ))
            .into());
        }
    }
    Ok(request)
}

/// The body as a JSON object; an empty body is an empty object. Like
/// Triton, a body that does not parse is a 500.
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    parse_object(body)
}

/// The body as a JSON object; an empty body is an error.
pub(crate) fn parse_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::internal("the request body must be a JSON object").into()),
        Err(e) => {
            Err(Error::internal(format!("failed to parse the request JSON buffer: {e}")).into())
        }
    }
}

fn index_json(entry: &IndexEntry) -> Value {
    let mut row = Map::new();
    row.insert("name".into(), json!(entry.name));
    if let Some(version) = entry.version {
        row.insert("version".into(), json!(version.to_string()));
    }
    if let Some(state) = entry.state {
        row.insert("state".into(), json!(state.to_string()));
        if !entry.reason.is_empty() {
            row.insert("reason".into(), json!(entry.reason));
        }
    }
    Value::Object(row)
}
