//! KServe v2 JSON inference: parses the request and answers
//! `{"model_name", "model_version": "1", "outputs": [...]}` whose outputs echo the inputs
//! (INPUT<n> -> OUTPUT<n>), the data as JSON numbers again.

use axum::{
    Json,
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{http_answer::bad_request, model};

#[derive(Deserialize)]
struct InferRequest {
    inputs: Vec<Tensor>,
}

#[derive(Deserialize, Serialize)]
struct Tensor {
    name: String,
    datatype: String,
    shape: Vec<i64>,
    data: Vec<Value>,
}

#[derive(Serialize)]
struct InferResponse {
    model_name: String,
    model_version: &'static str,
    outputs: Vec<Tensor>,
}

/// Answers a JSON infer request `body` for `model`.
pub fn infer(model: String, body: &[u8]) -> Response {
    let req: InferRequest = match serde_json::from_slice(body) {
        Ok(req) => req,
        Err(e) => return bad_request(format!("failed to parse the request JSON: {e}")),
    };
    let outputs = req
        .inputs
        .into_iter()
        .map(|t| Tensor {
            name: model::output_name(&t.name),
            ..t
        })
        .collect();
    Json(InferResponse {
        model_name: model,
        model_version: "1",
        outputs,
    })
    .into_response()
}
