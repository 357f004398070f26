//! Benchmark ceiling: `POST /v2/models/{model}/infer` parses a KServe v2 JSON infer
//! request and answers `{"model_name", "model_version": "1", "outputs": [...]}`
//! whose outputs echo the inputs (INPUT<n> -> OUTPUT<n>). `GET /v2/models/identity`
//! and `GET /v2/models/identity/config` answer static metadata and configuration of
//! bench/http_identity.sh's identity model, which oxiserve-perf reads before sending.
//! Usage: `ceiling --port N`.

use axum::{
    Json, Router,
    extract::Path,
    routing::{get, post},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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

async fn infer(Path(model): Path<String>, Json(req): Json<InferRequest>) -> Json<InferResponse> {
    let outputs = req
        .inputs
        .into_iter()
        .map(|t| Tensor { name: t.name.replacen("INPUT", "OUTPUT", 1), ..t })
        .collect();
    Json(InferResponse { model_name: model, model_version: "1", outputs })
}

async fn identity_metadata() -> Json<Value> {
    let tensor = |name: &str| json!({"name": name, "datatype": "FP32", "shape": [-1, 16]});
    Json(json!({
        "name": "identity",
        "versions": ["1"],
        "platform": "identity",
        "inputs": [tensor("INPUT0")],
        "outputs": [tensor("OUTPUT0")],
    }))
}

async fn identity_config() -> Json<Value> {
    let tensor = |name: &str| json!({"name": name, "data_type": "TYPE_FP32", "dims": [16]});
    Json(json!({
        "name": "identity",
        "backend": "identity",
        "max_batch_size": 8,
        "input": [tensor("INPUT0")],
        "output": [tensor("OUTPUT0")],
    }))
}

fn port_from_args() -> u16 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = match args.as_slice() {
        [flag, v] if flag == "--port" => v.clone(),
        [arg] if arg.starts_with("--port=") => arg["--port=".len()..].to_string(),
        _ => {
            eprintln!("usage: ceiling --port N");
            std::process::exit(2);
        }
    };
    value.parse().unwrap_or_else(|_| {
        eprintln!("ceiling: bad port '{value}'");
        std::process::exit(2);
    })
}

#[tokio::main]
async fn main() {
    let port = port_from_args();
    let app = Router::new()
        .route("/v2/models/{model}/infer", post(infer))
        .route("/v2/models/identity", get(identity_metadata))
        .route("/v2/models/identity/config", get(identity_config));
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await.expect("bind");
    eprintln!("ceiling: listening on 0.0.0.0:{port}");
    axum::serve(listener, app).await.expect("serve");
}
