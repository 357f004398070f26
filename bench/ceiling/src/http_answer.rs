//! What the HTTP handlers share: the binary extension's header and the error answer.

use axum::{
    Json,
    http::{HeaderName, StatusCode},
    response::{IntoResponse, Response},
};
use serde_json::json;

/// The header giving the length of a binary request's (or response's) JSON header.
pub const HEADER_LENGTH: HeaderName = HeaderName::from_static("inference-header-content-length");

/// A 400 answer with Triton's `{"error": ...}` body.
pub fn bad_request(error: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({ "error": error }))).into_response()
}
