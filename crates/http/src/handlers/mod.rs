//! Request handlers, one file per protocol area.

pub(crate) mod generate;
pub(crate) mod health;
pub(crate) mod infer;
pub(crate) mod logging;
pub mod metadata;
pub(crate) mod repository;
pub(crate) mod shared_memory;
pub(crate) mod statistics;
pub(crate) mod trace;

use serde::Deserialize;

use crate::error::ApiError;

/// `/v2/models/{model}[/versions/{version}]` path parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct ModelPath {
    pub model: String,
    #[serde(default)]
    pub version: Option<String>,
}

impl ModelPath {
    /// The version asked for; an empty version means "let the policy choose".
    /// Like Triton, a version that is not a number matches no route.
    pub fn version(&self) -> Result<Option<i64>, ApiError> {
        match self.version.as_deref() {
            None => Ok(None),
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                v.parse().map(Some).map_err(|_| not_found())
            }
            Some(_) => Err(not_found()),
        }
    }
}

/// Triton's answer for a path it has no route for.
pub(crate) fn not_found() -> ApiError {
    ApiError::new(axum::http::StatusCode::NOT_FOUND, "Not Found")
}

/// Triton's answer for a method a route does not take.
pub(crate) fn method_not_allowed() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "Method Not Allowed",
    )
}

/// A JSON response with the right content type.
pub(crate) fn json_response(value: &serde_json::Value) -> axum::response::Response {
    use axum::{http::header, response::IntoResponse};
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}
