//! `POST /v2/models/{model}[/versions/{version}]/infer`: decode, run, encode.

use std::time::Instant;

use axum::{
    Extension,
    body::{Body, Bytes},
    extract::rejection::BytesRejection,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use oxiserve_trace::{Activity, Trace};
use oxiserve_types::{Error, ErrorKind, InferRequest};

use super::ModelPath;
use crate::{
    app::App,
    body::Chunks,
    codec::{
        EncodedResponse, decode_infer_request, decode_raw_request, encode_infer_response,
        is_raw_binary_request,
    },
    compression::{Encoding, decode_request, encode_response, response_encoding},
    error::{ApiError, ApiResult},
    traced::{self, Received, TracedBody},
};

const HEADER_LENGTH: &str = "inference-header-content-length";

/// Runs one inference (traced when sampled). If the client disconnects
/// first, the request is cancelled: dropping this future drops its
/// response stream.
pub(crate) async fn infer(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
    received: Option<Extension<Received>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let version = path.version()?;
    let body = body.map_err(|rejection| body_error(&app, rejection))?;
    let body = decode_request(&headers, body, app.max_body_bytes)?;
    let header_length = header_length(&headers, body.len())?;
    let model = app.server.model(&path.model, version)?;
    if model.is_decoupled() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "HTTP end point doesn't support models with decoupled transaction policy",
        )
        .into());
    }
    let received = received.map(|Extension(r)| r);
    let trace = traced::sample(&app.server, &path.model, &headers, received);
    let mut request = if is_raw_binary_request(body.len(), header_length) {
        decode_raw_request(model.config(), version, body)?
    } else {
        decode_infer_request(&path.model, version, body, header_length)?
    };
    let echo = InferRequest {
        outputs: request.outputs.clone(),
        parameters: request.parameters.clone(),
        ..Default::default()
    };
    if let Some(forward) = &app.header_forward {
        let headers = headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes()));
        forward.forward(headers, &mut request.parameters);
    }
    let responses = app.server.infer_traced(&model, request, trace.clone())?;
    let response = responses.single().await?;
    if let Some(trace) = &trace {
        trace.report(Activity::InferResponseComplete, Instant::now());
    }
    let encoded = encode_infer_response(&response, &echo)?;
    Ok(into_response(encoded, response_encoding(&headers), trace))
}

/// The `Inference-Header-Content-Length` header, read as Triton reads it:
/// text that is not a number counts as 0 (a raw binary request).
fn header_length(headers: &HeaderMap, body_length: usize) -> Result<Option<usize>, Error> {
    let Some(value) = headers.get(HEADER_LENGTH) else {
        return Ok(None);
    };
    match value.to_str().unwrap_or("").trim().parse::<i64>() {
        Ok(length) if length >= 0 => Ok(Some(length as usize)),
        Ok(length) => Err(Error::invalid_arg(format!(
            "inference header size should be in range (0, {body_length}), got: {length}"
        ))),
        Err(_) => Ok(Some(0)),
    }
}

/// Why the body could not be read, naming the limit when it was too large.
pub(crate) fn body_error(app: &App, rejection: BytesRejection) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(
            status,
            format!(
                "the request body is larger than the limit of {} bytes (--http-max-input-size)",
                app.max_body_bytes
            ),
        );
    }
    ApiError::new(status, rejection.body_text())
}

fn into_response(
    encoded: EncodedResponse,
    encoding: Option<Encoding>,
    trace: Option<Trace>,
) -> Response {
    let content_type = encoded.content_type();
    let header_length = encoded.header_length;
    let (body, content_encoding) = match encoding {
        Some(encoding) => {
            let (packed, name) = encode_response(encoding, encoded.into_chunks());
            (Body::from(packed), Some(name))
        }
        None if header_length.is_none() => (Body::from(encoded.json), None),
        None => (Body::new(Chunks::new(encoded.into_chunks())), None),
    };
    let body = match trace {
        Some(trace) => Body::new(TracedBody::new(body, trace)),
        None => body,
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(length) = header_length {
        headers.insert(HEADER_LENGTH, HeaderValue::from(length));
    }
    if let Some(name) = content_encoding {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
    }
    response
}
