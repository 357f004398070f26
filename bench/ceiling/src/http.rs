//! The HTTP side: `POST /v2/models/{model}/infer` goes to the binary tensor extension when the
//! request has an `Inference-Header-Content-Length` header, else to JSON;
//! `GET /v2/models/identity` and `/config` answer the model's metadata and configuration
//! (static JSON), which oxiserve-perf reads before sending.

use axum::{
    Json, Router,
    body::Bytes,
    extract::Path,
    http::HeaderMap,
    response::Response,
    routing::{get, post},
};
use serde_json::{Value, json};

use crate::{
    http_answer::{HEADER_LENGTH, bad_request},
    http_binary, http_json, model,
};

/// The HTTP routes.
pub fn router() -> Router {
    Router::new()
        .route("/v2/models/{model}/infer", post(infer))
        .route(&format!("/v2/models/{}", model::NAME), get(metadata))
        .route(&format!("/v2/models/{}/config", model::NAME), get(config))
}

async fn infer(Path(model): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    match headers.get(&HEADER_LENGTH) {
        Some(length) => match length.to_str().ok().and_then(|s| s.parse().ok()) {
            Some(length) => http_binary::infer(model, length, body),
            None => bad_request(format!("bad {HEADER_LENGTH} header {length:?}")),
        },
        None => http_json::infer(model, &body),
    }
}

async fn metadata() -> Json<Value> {
    let tensor = |name: &str| json!({"name": name, "datatype": model::DATATYPE, "shape": [-1, model::DIMS[0]]});
    Json(json!({
        "name": model::NAME,
        "versions": ["1"],
        "platform": "identity",
        "inputs": [tensor(model::INPUT)],
        "outputs": [tensor(model::OUTPUT)],
    }))
}

async fn config() -> Json<Value> {
    let tensor = |name: &str| json!({"name": name, "data_type": "TYPE_FP32", "dims": model::DIMS});
    Json(json!({
        "name": model::NAME,
        "backend": "identity",
        "max_batch_size": model::MAX_BATCH_SIZE,
        "input": [tensor(model::INPUT)],
        "output": [tensor(model::OUTPUT)],
    }))
}
