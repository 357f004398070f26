//! `POST /v2/models/{model}[/versions/{version}]/generate` and
//! `.../generate_stream`: Triton's generate extension. `generate` answers
//! the one response of the model as a JSON object; `generate_stream`
//! answers each response as a Server-Sent Event (`data: {...}\n\n`), an
//! error as an `{"error": ...}` event, the HTTP status being the first
//! event's. Errors before the inference starts are plain JSON errors.

use std::{convert::Infallible, future::ready, time::Instant};

use axum::{
    Extension,
    body::{Body, Bytes},
    extract::rejection::BytesRejection,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures_util::{StreamExt, stream};
use oxiserve_core::{ModelMetadata, ResponseStream, StreamEvent};
use oxiserve_trace::{Activity, Trace};
use oxiserve_types::{Error, InferResponse};

use super::{ModelPath, infer::body_error};
use crate::{
    app::App,
    codec::{decode_generate_request, encode_generate_response},
    error::{ApiResult, status_for},
    sse::{self, EVENT_STREAM},
    traced::{self, Received, TracedBody},
};

/// `.../generate` (`STREAM` false): the model's one response;
/// `.../generate_stream` (`STREAM` true): every response of the model, as
/// it comes. If the client goes away, dropping the body cancels the request.
/// Traced when sampled, as inferences are.
pub(crate) async fn generate<const STREAM: bool>(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
    received: Option<Extension<Received>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let body = body.map_err(|rejection| body_error(&app, rejection))?;
    let received = received.map(|Extension(r)| r);
    let trace = traced::sample(&app.server, &path.model, &headers, received);
    let responses = start(&app, &path, &headers, &body, trace.clone())?;
    let response = match STREAM {
        true => event_stream(responses, trace.clone()).await,
        false => single(responses, trace.as_ref()).await,
    };
    Ok(match trace {
        Some(trace) => response.map(|body| Body::new(TracedBody::new(body, trace))),
        None => response,
    })
}

/// Looks the model up, decodes the body against its inputs and starts the
/// inference (any model, decoupled or not).
fn start(
    app: &App,
    path: &ModelPath,
    headers: &HeaderMap,
    body: &[u8],
    trace: Option<Trace>,
) -> ApiResult<ResponseStream> {
    let version = path.version()?;
    let model = app.server.model(&path.model, version)?;
    if !is_identity(headers) {
        return Err(Error::invalid_arg(
            "Unsupported content-encoding, only 'identity' is supported.",
        )
        .into());
    }
    let metadata = ModelMetadata::new(model.config(), Vec::new());
    let request = decode_generate_request(&path.model, version, &metadata.inputs, body)?;
    Ok(app.server.infer_traced(&model, request, trace)?)
}

/// Whether the body is sent as it is: no `Content-Encoding`, or `identity`
/// (Triton's generate takes no compressed body).
fn is_identity(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_ENCODING)
        .is_none_or(|value| value.is_empty() || value == "identity")
}

/// The one response as JSON; a model that sends none or several fails the
/// request.
async fn single(mut responses: ResponseStream, trace: Option<&Trace>) -> Response {
    let mut all = Vec::new();
    while let Some(event) = responses.next().await {
        report_response(trace, &event);
        all.extend(event.response);
    }
    let only = match <[_; 1]>::try_from(all) {
        Ok([only]) => only,
        Err(_) => Err(Error::internal(
            "generate expects model to produce exactly 1 response, use generate stream for \
             model that generates various number of responses",
        )),
    };
    match only.and_then(|response| encode_generate_response(&response)) {
        Ok(json) => with_type(StatusCode::OK, "application/json", Body::from(json)),
        Err(e) => with_type(status_for(e.kind), "application/json", error_json(&e)),
    }
}

/// The responses as Server-Sent Events, with the status of the first one.
async fn event_stream(mut responses: ResponseStream, trace: Option<Trace>) -> Response {
    let first = responses.next().await;
    let status = match first.as_ref().and_then(|event| event.response.as_ref()) {
        Some(Err(e)) => status_for(e.kind),
        _ => StatusCode::OK,
    };
    let events = stream::iter(first)
        .chain(sse::events(responses))
        .filter_map(move |event| {
            report_response(trace.as_ref(), &event);
            ready(event_data(event).map(Ok::<_, Infallible>))
        });
    with_type(status, EVENT_STREAM, Body::from_stream(events))
}

/// Reports a response's `INFER_RESPONSE_COMPLETE` on the request's trace.
fn report_response(trace: Option<&Trace>, event: &StreamEvent) {
    if let Some(trace) = trace
        && event.response.is_some()
    {
        trace.report(Activity::InferResponseComplete, Instant::now());
    }
}

/// The `data:` event of a response, if the event carries one.
fn event_data(event: StreamEvent) -> Option<Bytes> {
    let response: Result<InferResponse, Error> = event.response?;
    let json = response
        .and_then(|response| encode_generate_response(&response))
        .unwrap_or_else(|e| error_json(&e));
    Some(sse::data_event(&json))
}

/// `{"error":"..."}`, as every error body.
fn error_json(error: &Error) -> Vec<u8> {
    serde_json::json!({ "error": error.message })
        .to_string()
        .into_bytes()
}

fn with_type(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut response = (status, body.into()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
