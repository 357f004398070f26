//! The shared memory extensions: `/v2/systemsharedmemory/...` over the
//! core's region registry, and `/v2/cudasharedmemory/...` answered as a
//! Triton built without GPU support answers (no CUDA region can exist).

use axum::{
    body::Bytes,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};
use oxiserve_core::{RegionStatus, cuda_register as cuda_register_region, cuda_status};
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

/// `POST /v2/systemsharedmemory/unregister`
pub(crate) async fn system_unregister_all(State(app): State<App>) -> Response {
    app.server.shared_memory().unregister_all();
    ok()
}

/// `POST /v2/systemsharedmemory/region/{name}/unregister`
pub(crate) async fn system_unregister_one(
    State(app): State<App>,
    Path(name): Path<String>,
) -> Response {
    app.server.shared_memory().unregister(&name);
    ok()
}

/// `GET /v2/cudasharedmemory/status`: there are no CUDA regions.
pub(crate) async fn cuda_status_all() -> Response {
    json_response(&Value::Array(Vec::new()))
}

/// `GET /v2/cudasharedmemory/region/{name}/status`
pub(crate) async fn cuda_status_one(Path(name): Path<String>) -> ApiResult<Response> {
    cuda_status(Some(&name))?;
    Ok(json_response(&Value::Array(Vec::new())))
}

/// `POST /v2/cudasharedmemory/register`
pub(crate) async fn cuda_register_unnamed() -> ApiResult<Response> {
    Err(
        Error::invalid_arg("'region name' is necessary to register cuda shared memory region")
            .into(),
    )
}

/// `POST /v2/cudasharedmemory/region/{name}/register`: refused, as by a
/// Triton built without GPU support.
pub(crate) async fn cuda_register(Path(name): Path<String>) -> ApiResult<Response> {
    cuda_register_region(&name)?;
    Ok(ok())
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

fn unsigned(value: &Value) -> Result<u64, Error> {
    value.as_u64().ok_or_else(|| {
        Error::internal("attempt to access JSON non-unsigned-integer as unsigned-integer")
    })
}
