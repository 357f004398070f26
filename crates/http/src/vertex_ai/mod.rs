//! Triton's Vertex AI endpoint (`--allow-vertex-ai`, on by default with
//! `AIP_MODE=PREDICTION`): `GET` on the health route (`AIP_HEALTH_ROUTE`)
//! reports readiness, `POST` on the predict route (`AIP_PREDICT_ROUTE`)
//! runs an inference of the default model, or, with the
//! `X-Vertex-Ai-Triton-Redirect` header, the KServe request the header
//! names (see [`redirect`]). Other requests get 400 with no body.

mod redirect;

use std::sync::Arc;

use axum::{
    Router,
    extract::{DefaultBodyLimit, Request, State},
    http::{Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use oxiserve_core::Server;
use regex::Regex;

use crate::{
    binary_json::{self, VERTEX_AI_MIME as MIME},
    forward::{Door, model_route},
    options::HttpOptions,
};
use redirect::Redirect;

/// The header that names another endpoint.
const REDIRECT: &str = "x-vertex-ai-triton-redirect";

/// The Prometheus text of the server's metrics.
pub type RenderMetrics = Arc<dyn Fn() -> String + Send + Sync>;

/// Settings of the Vertex AI endpoint.
#[derive(Clone)]
pub struct VertexAiOptions {
    /// `AIP_PREDICT_ROUTE`: a regular expression the whole path matches.
    pub predict_route: String,
    /// `AIP_HEALTH_ROUTE`, likewise.
    pub health_route: String,
    /// The model of predictions without a redirect.
    pub default_model: String,
    /// The `metrics` redirect's answer; `None` when metrics are off.
    pub metrics: Option<RenderMetrics>,
}

/// The Vertex AI endpoint's routes over `server`; `http` gives the body
/// limit and the KServe routes requests are forwarded to. Errors: a route
/// that is not a regular expression.
pub fn vertex_ai_router(
    server: Server,
    http: &HttpOptions,
    options: VertexAiOptions,
) -> Result<Router, String> {
    let route = |name: &str, pattern: &str| {
        Regex::new(&format!("^(?:{pattern})$"))
            .map_err(|e| format!("{name} is not a valid regular expression: {e}"))
    };
    let vertex = VertexAi {
        predict: route("AIP_PREDICT_ROUTE", &options.predict_route)?,
        health: route("AIP_HEALTH_ROUTE", &options.health_route)?,
        door: Door::new(server, http),
        options,
    };
    Ok(Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(http.max_body_bytes))
        .with_state(Arc::new(vertex)))
}

struct VertexAi {
    predict: Regex,
    health: Regex,
    door: Door,
    options: VertexAiOptions,
}

/// Triton's dispatch of a Vertex AI request.
async fn handle(State(vertex): State<Arc<VertexAi>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    log::debug!("Vertex AI request: {method} {path}");
    if vertex.health.is_match(&path) {
        return vertex
            .door
            .forward(request, method, "/v2/health/ready")
            .await;
    }
    if !vertex.predict.is_match(&path) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let redirect = request
        .headers()
        .get(REDIRECT)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let Some(redirect) = redirect else {
        return infer(
            &vertex,
            request,
            &model_route(&vertex.options.default_model, None, "infer"),
        )
        .await;
    };
    // The endpoint takes POST only; the redirect says which method the
    // KServe endpoint is called with.
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    log::debug!("Redirecting Vertex AI request: /{redirect}");
    match redirect::target(&format!("/{redirect}")) {
        Some(Redirect::Metrics) => metrics(&vertex),
        Some(Redirect::Infer(path)) => infer(&vertex, request, &path).await,
        Some(Redirect::Kserve(method, path)) => vertex.door.forward(request, method, &path).await,
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// A KServe inference (`path`) with Vertex AI's reading of the body.
async fn infer(vertex: &VertexAi, request: Request, path: &str) -> Response {
    let method = request.method().clone();
    match binary_json::infer_request(&vertex.door.app, request, MIME).await {
        Ok(request) => vertex.door.forward(request, method, path).await,
        Err(refused) => refused,
    }
}

/// The server's metrics, as the metrics endpoint serves them; 400 when
/// metrics are off (Triton has none to give).
fn metrics(vertex: &VertexAi) -> Response {
    match &vertex.options.metrics {
        Some(render) => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            render(),
        )
            .into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}
