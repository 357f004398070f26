//! The model repository extension: index, load, unload.

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use oxiserve_core::IndexEntry;
use oxiserve_types::{Error, ErrorKind};
use serde_json::{Map, Value, json};

use super::json_response;
use crate::{
    error::{ApiError, ApiResult},
    router::App,
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

/// `POST /v2/repository/models/{model}/load`
pub(crate) async fn load(
    State(app): State<App>,
    Path(model): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = object(&body)?;
    if let Some(Value::Object(parameters)) = body.get("parameters")
        && let Some(name) = parameters
            .keys()
            .find(|k| *k == "config" || k.starts_with("file:"))
    {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("load of '{model}' with the '{name}' parameter is not supported yet"),
        )
        .into());
    }
    let server = app.server.clone();
    tokio::task::spawn_blocking(move || server.load_model(&model))
        .await
        .map_err(|e| Error::internal(e.to_string()))??;
    Ok(StatusCode::OK.into_response())
}

/// `POST /v2/repository/models/{model}/unload`
pub(crate) async fn unload(
    State(app): State<App>,
    Path(model): Path<String>,
) -> ApiResult<Response> {
    // Like Triton, the body's parameters (unload_dependents) never fail an
    // unload; no model depends on another until ensembles exist.
    let server = app.server.clone();
    tokio::task::spawn_blocking(move || server.unload_model(&model))
        .await
        .map_err(|e| Error::internal(e.to_string()))??;
    Ok(StatusCode::OK.into_response())
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
