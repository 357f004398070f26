//! Benchmark ceiling: `POST /v2/models/{model}/infer` parses a KServe v2 JSON infer
//! request and answers `{"model_name", "model_version": "1", "outputs": [...]}`
//! whose outputs echo the inputs (INPUT<n> -> OUTPUT<n>). Usage: `ceiling --port N`.

use axum::{Json, Router, extract::Path, routing::post};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    let app = Router::new().route("/v2/models/{model}/infer", post(infer));
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await.expect("bind");
    eprintln!("ceiling: listening on 0.0.0.0:{port}");
    axum::serve(listener, app).await.expect("serve");
}
