//! The server's JSON endpoints: model metadata and configuration, statistics.

use bytes::Bytes;
use hyper::{Method, Request, StatusCode};
use serde_json::Value;

use super::{
    body::{OnceBody, collect},
    conn::HttpConn,
};
use crate::error::{Error, Result};

/// Sends a request and parses the JSON answer; a non-2xx status becomes an
/// error carrying the server's message.
pub async fn call(
    conn: &mut HttpConn,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<Value> {
    let data = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    let mut builder = Request::builder().method(method.clone()).uri(path);
    if body.is_some() {
        builder = builder.header(hyper::header::CONTENT_TYPE, "application/json");
    }
    let request = builder
        .body(OnceBody::plain(data))
        .map_err(|e| Error::new(format!("bad request {path}: {e}")))?;
    let mut response = conn
        .send(request)
        .await
        .map_err(|e| e.context(format!("{method} {path}")))?;
    let status = response.status();
    let raw = conn.drive(collect(response.body_mut())).await??;
    let value: Value = if raw.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&raw).map_err(|e| {
            Error::new(format!(
                "{method} {path}: answer is not JSON ({e}): {}",
                String::from_utf8_lossy(&raw)
            ))
        })?
    };
    if status != StatusCode::OK {
        let message = value["error"]
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        return Err(Error::new(format!("{method} {path}: {status}: {message}")));
    }
    Ok(value)
}

/// `GET path` as JSON.
pub async fn get(conn: &mut HttpConn, path: &str) -> Result<Value> {
    call(conn, Method::GET, path, None).await
}

/// `/v2/models/NAME[/versions/V]`: the URL prefix of one model.
pub fn model_path(model: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("/v2/models/{model}/versions/{v}"),
        None => format!("/v2/models/{model}"),
    }
}
