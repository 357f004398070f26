//! Triton's SageMaker endpoint (`--allow-sagemaker`): `GET /ping`,
//! `POST /invocations` on the default model, and the multi-model endpoint
//! (`/models...`, see [`models`]). Each request is answered by the KServe
//! handler it stands for; paths and methods the endpoint does not know get
//! 400 with no body, as in Triton.

mod archive;
mod models;

use std::{path::PathBuf, sync::Arc, sync::LazyLock};

use axum::{
    Router,
    extract::{DefaultBodyLimit, Request, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use oxiserve_core::Server;
use regex::Regex;

use crate::{
    binary_json::{self, SAGEMAKER_MIME as MIME, to_binary_content_type},
    forward::{Door, model_route},
    options::HttpOptions,
};
use models::{Endpoint, Models};

/// `/models[/{name}][/invoke]`, Triton's pattern.
static MODELS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^/models/?([^/]+)?(/invoke)?$").expect("a valid pattern"));

/// What `/ping` reports (`SAGEMAKER_TRITON_PING_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PingMode {
    /// The server is ready (the default).
    Ready,
    /// The server is live (`live`).
    Live,
}

/// What `POST /invocations` runs (`SAGEMAKER_TRITON_INFERENCE_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InferenceType {
    /// A KServe inference (the default).
    Infer,
    /// A generate request.
    Generate,
    /// A generate_stream request (Server-Sent Events).
    GenerateStream,
}

/// Settings of the SageMaker endpoint.
#[derive(Debug, Clone)]
pub struct SagemakerOptions {
    /// The model of `/invocations` (`SAGEMAKER_TRITON_DEFAULT_MODEL_NAME`).
    pub default_model: String,
    pub ping_mode: PingMode,
    pub inference_type: InferenceType,
    /// Where `POST /models` registers model archives: a folder of the
    /// server's repositories, to hold one link per model folder. `None`
    /// without explicit model control, where registering fails as in Triton.
    pub registry: Option<PathBuf>,
}

/// The SageMaker endpoint's routes over `server`; `http` gives the body
/// limit and the KServe routes requests are forwarded to.
pub fn sagemaker_router(server: Server, http: &HttpOptions, options: SagemakerOptions) -> Router {
    let sagemaker = Sagemaker {
        door: Door::new(server, http),
        models: Models::new(options.registry.clone()),
        options,
    };
    Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(http.max_body_bytes))
        .with_state(Arc::new(sagemaker))
}

struct Sagemaker {
    door: Door,
    options: SagemakerOptions,
    models: Models,
}

/// Triton's dispatch of a SageMaker request.
async fn handle(State(sagemaker): State<Arc<Sagemaker>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    log::debug!("SageMaker request: {} {path}", request.method());
    match path.as_str() {
        "/ping" => {
            let health = match sagemaker.options.ping_mode {
                PingMode::Ready => "/v2/health/ready",
                PingMode::Live => "/v2/health/live",
            };
            let method = request.method().clone();
            sagemaker.door.forward(request, method, health).await
        }
        "/invocations" => invocations(&sagemaker, request).await,
        _ => match MODELS.captures(&path) {
            Some(captures) => {
                let name = captures.get(1).map_or("", |m| m.as_str());
                let invoke = captures.get(2).is_some();
                let endpoint = Endpoint {
                    door: &sagemaker.door,
                    models: &sagemaker.models,
                };
                models::handle(&endpoint, request, name, invoke).await
            }
            None => StatusCode::BAD_REQUEST.into_response(),
        },
    }
}

/// `POST /invocations`: the default model's inference, or its generate
/// request as `SAGEMAKER_TRITON_INFERENCE_TYPE` says.
async fn invocations(sagemaker: &Sagemaker, mut request: Request) -> Response {
    let model = &sagemaker.options.default_model;
    let kind = match sagemaker.options.inference_type {
        InferenceType::Infer => return infer(sagemaker, request, model).await,
        InferenceType::Generate => "generate",
        InferenceType::GenerateStream => "generate_stream",
    };
    // The endpoint takes bodies as they are.
    request
        .headers_mut()
        .remove(axum::http::header::CONTENT_ENCODING);
    let method = request.method().clone();
    let path = model_route(model, None, kind);
    sagemaker.door.forward(request, method, &path).await
}

/// A KServe inference of `model` with SageMaker's content types.
async fn infer(sagemaker: &Sagemaker, request: Request, model: &str) -> Response {
    let method = request.method().clone();
    let request = match binary_json::infer_request(&sagemaker.door.app, request, MIME).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    let path = model_route(model, None, "infer");
    let mut response = sagemaker.door.forward(request, method, &path).await;
    to_binary_content_type(response.headers_mut(), MIME);
    response
}
