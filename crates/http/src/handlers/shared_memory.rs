//! The shared memory extensions: `/v2/systemsharedmemory/...` over the
//! core's region registry, and `/v2/cudasharedmemory/...` answered as
//! Triton answers on a machine without GPUs (no CUDA region can exist).

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};
use oxiserve_core::RegionStatus;
use oxiserve_types::Error;
use serde_json::{Map, Value, json};

use super::json_response;
use crate::{app::App, error::ApiResult};

/// `GET /v2/systemsharedmemory/status`
pub(crate) async fn system_status_all(State(app): State<App>) -> ApiResult<Response> {
    system_status(&app, None)
}

/// `GET /v2/systemsharedmemory/region/{name}/status`
pub(crate) async fn system_status_one(
    State(app): State<App>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    system_status(&app, Some(&name))
}

fn system_status(app: &App, name: Option<&str>) -> ApiResult<Response> {
    let regions = app.server.shared_memory().status(name)?;
    let rows: Vec<Value> = regions.iter().map(status_json).collect();
    Ok(json_response(&Value::Array(rows)))
}

fn status_json(region: &RegionStatus) -> Value {
    json!({
        "name": region.name,
        "key": region.key,
        "offset": region.offset,
        "byte_size": region.byte_size,
    })
}

/// `POST /v2/systemsharedmemory/register`: Triton requires a region name.
pub(crate) async fn system_register_unnamed() -> ApiResult<Response> {
    Err(
        Error::invalid_arg("'region name' is necessary to register system shared memory region")
            .into(),
    )
}

/// `POST /v2/systemsharedmemory/region/{name}/register` with
/// `{"key": string, "offset": uint (default 0), "byte_size": uint}`.
pub(crate) async fn system_register(
    State(app): State<App>,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = register_body(&body)?;
    let key = match body.get("key") {
        None => return Err(missing_field("key").into()),
        Some(Value::String(key)) => key,
        Some(_) => {
            return Err(Error::internal("attempt to access JSON non-string as string").into());
        }
    };
    let offset = match body.get("offset") {
        None => 0,
        Some(value) => unsigned(value)?,
    };
    let byte_size = match body.get("byte_size") {
        None => return Err(missing_field("byte_size").into()),
        Some(value) => unsigned(value)?,
    };
    app.server
        .shared_memory()
        .register(&name, key, offset, byte_size)?;
    Ok(ok())
}

/// `POST /v2/systemsharedmemory/unregister`: regions an inference uses
/// stay, and that is Triton's 500.
pub(crate) async fn system_unregister_all(State(app): State<App>) -> ApiResult<Response> {
    app.server.shared_memory().unregister_all()?;
    Ok(ok())
}

/// `POST /v2/systemsharedmemory/region/{name}/unregister`: a region an
/// inference uses stays, and that is Triton's 500.
pub(crate) async fn system_unregister_one(
    State(app): State<App>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    app.server.shared_memory().unregister(&name)?;
    Ok(ok())
}

/// `GET /v2/cudasharedmemory/status`: there are no CUDA regions.
pub(crate) async fn cuda_status_all() -> Response {
    json_response(&Value::Array(Vec::new()))
}

/// `GET /v2/cudasharedmemory/region/{name}/status`
pub(crate) async fn cuda_status_one(
    State(app): State<App>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    app.server.shared_memory().cuda_status(Some(&name))?;
    Ok(json_response(&Value::Array(Vec::new())))
}

/// `POST /v2/cudasharedmemory/register`
pub(crate) async fn cuda_register_unnamed() -> ApiResult<Response> {
    Err(
        Error::invalid_arg("'region name' is necessary to register cuda shared memory region")
            .into(),
    )
}

/// `POST /v2/cudasharedmemory/region/{name}/register` with
/// `{"raw_handle": {"b64": string}, "byte_size": uint, "device_id": uint}`:
/// the body is checked as Triton checks it, then the registration is
/// refused as Triton refuses it on a machine without GPUs.
pub(crate) async fn cuda_register(
    State(app): State<App>,
    Path(name): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = register_body(&body)?;
    let Some(raw_handle) = body.get("raw_handle") else {
        return Err(missing_field("raw_handle").into());
    };
    let b64 = match raw_handle.get("b64") {
        None => return Err(no_member("b64").into()),
        Some(Value::String(b64)) => b64,
        Some(_) => {
            return Err(Error::internal("attempt to access JSON non-string as string").into());
        }
    };
    for field in ["byte_size", "device_id"] {
        unsigned(body.get(field).ok_or_else(|| no_member(field))?)?;
    }
    if base64_decoded_len(b64) != CUDA_IPC_HANDLE_SIZE {
        return Err(Error::invalid_arg(
            "'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t",
        )
        .into());
    }
    app.server.shared_memory().cuda_register(&name)?;
    Ok(ok())
}

/// `sizeof(cudaIpcMemHandle_t)`: what a CUDA IPC handle decodes to.
const CUDA_IPC_HANDLE_SIZE: usize = 64;

/// How many bytes Triton's base64 decoder (libb64) makes of `text`: it
/// skips every character outside the base64 alphabet (padding included),
/// and every 4 characters left make 3 bytes.
fn base64_decoded_len(text: &str) -> usize {
    let symbols = text
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
        .count();
    symbols * 3 / 4
}

/// `POST /v2/cudasharedmemory[/region/{name}]/unregister`: nothing to do.
pub(crate) async fn cuda_unregister() -> Response {
    ok()
}

/// Triton's success answer: 200, an empty JSON-typed body.
fn ok() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], "").into_response()
}

/// The register body's members; a JSON value that is not an object has
/// none. A body that does not parse is Triton's 500.
fn register_body(body: &[u8]) -> Result<Map<String, Value>, Error> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(Error::internal(format!(
            "failed to parse the request JSON buffer: {e}"
        ))),
    }
}

fn missing_field(field: &str) -> Error {
    Error::invalid_arg(format!(
        "Shared memory register request has no '{field}' field"
    ))
}

/// TritonJson's error for a member the body lacks (500).
fn no_member(field: &str) -> Error {
    Error::internal(format!(
        "attempt to access non-existing object member '{field}'"
    ))
}

fn unsigned(value: &Value) -> Result<u64, Error> {
    value.as_u64().ok_or_else(|| {
        Error::internal("attempt to access JSON non-unsigned-integer as unsigned-integer")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_lengths_are_libb64s() {
        let handle = "A".repeat(86) + "==";
        assert_eq!(base64_decoded_len(&handle), CUDA_IPC_HANDLE_SIZE);
        // Characters outside the alphabet are skipped, not refused.
        let spaced: String = handle.chars().flat_map(|c| [c, ' ', 'é']).collect();
        assert_eq!(base64_decoded_len(&spaced), CUDA_IPC_HANDLE_SIZE);
        assert_eq!(base64_decoded_len("AAAA"), 3);
        assert_eq!(base64_decoded_len("AAA"), 2);
        assert_eq!(base64_decoded_len("A"), 0);
        assert_eq!(base64_decoded_len("!!!!"), 0);
        assert_eq!(base64_decoded_len("+/+/"), 3);
    }
}
