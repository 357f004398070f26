//! `POST /v2/models/{model}[/versions/{version}]/infer`: decode, run, encode.

use axum::{
    body::{Body, Bytes},
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use oxiserve_types::{Error, ErrorKind, InferRequest};

use super::ModelPath;
use crate::{
    body::Chunks,
    codec::{EncodedResponse, decode_infer_request, encode_infer_response},
    error::ApiResult,
    router::App,
};

const HEADER_LENGTH: &str = "inference-header-content-length";

/// Runs one inference. If the client disconnects first, the request is
/// cancelled: dropping this future drops its response stream.
pub(crate) async fn infer(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let version = path.version()?;
    let header_length = match headers.get(HEADER_LENGTH) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or_else(|| {
                    Error::invalid_arg("Inference-Header-Content-Length must be a whole number")
                })?,
        ),
    };
    let model = app.server.model(&path.model, version)?;
    if model.is_decoupled() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "HTTP end point doesn't support models with decoupled transaction policy",
        )
        .into());
    }
    let request = decode_infer_request(&path.model, version, body, header_length)?;
    let echo = InferRequest {
        outputs: request.outputs.clone(),
        parameters: request.parameters.clone(),
        ..Default::default()
    };
    let response = app.server.infer(request)?.single().await?;
    let encoded = encode_infer_response(&response, &echo)?;
    Ok(into_response(encoded))
}

fn into_response(encoded: EncodedResponse) -> Response {
    let EncodedResponse {
        json,
        binary,
        header_length,
    } = encoded;
    let Some(header_length) = header_length else {
        return (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json,
        )
            .into_response();
    };
    let body = Body::new(Chunks::new(std::iter::once(json).chain(binary)));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(HEADER_LENGTH, HeaderValue::from(header_length));
    response
}
