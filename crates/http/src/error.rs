//! Errors as HTTP responses: Triton's status codes and `{"error": "..."}` bodies.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use oxiserve_types::{Error, ErrorKind};

/// The HTTP status Triton gives an error of `kind`.
pub fn status_for(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::InvalidArg
        | ErrorKind::AlreadyExists
        | ErrorKind::Cancelled
        | ErrorKind::Unknown => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Unsupported => StatusCode::NOT_IMPLEMENTED,
        ErrorKind::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An error on its way to the client.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    /// An error with an explicit status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self::new(status_for(e.kind), e.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string();
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }
}

/// A handler's result.
pub(crate) type ApiResult<T> = Result<T, ApiError>;
