//! Request bodies may be compressed as tritonclient sends them (gzip or
//! deflate); any other `Content-Encoding` is refused as Triton refuses it.

use axum::{
    extract::Request,
    http::{StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::error::ApiError;

/// Refuses encodings other than gzip, deflate and identity with 501.
pub(crate) async fn check_content_encoding(request: Request, next: Next) -> Response {
    if let Some(encoding) = request.headers().get(header::CONTENT_ENCODING)
        && !matches!(encoding.as_bytes(), b"gzip" | b"deflate" | b"identity")
    {
        return ApiError::new(StatusCode::NOT_IMPLEMENTED, "Unsupported compression type")
            .into_response();
    }
    next.run(request).await
}
