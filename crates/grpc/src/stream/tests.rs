//! Stream tests with a real core and a decoupled test backend: `repeat`
//! answers a request whose INT32 input holds `n` with `n` responses, then a
//! final flag alone (or, for a negative `n`, an error).

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use oxiserve_backend::{
    Backend, BackendRequest, BackendResponse, ComputeTiming, InstanceContext, Model, ModelContext,
    ModelInstance,
};
use oxiserve_core::{BackendRegistry, Server, ServerConfig};
use oxiserve_proto::inference::{
    InferParameter, ModelInferRequest, ModelStreamInferResponse, infer_parameter::ParameterChoice,
    model_infer_request::InferInputTensor,
};
use oxiserve_types::{Error, Result, Tensor};
use tokio::sync::{mpsc, oneshot};

use super::*;

struct Repeat;

impl Backend for Repeat {
    fn name(&self) -> &str {
        "repeat"
    }

    fn load(&self, _model: &ModelContext) -> Result<Arc<dyn Model>> {
        Ok(Arc::new(RepeatModel))
    }
}

struct RepeatModel;

impl Model for RepeatModel {
    fn create_instance(&self, _instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(RepeatInstance))
    }
}

struct RepeatInstance;

impl ModelInstance for RepeatInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, _timing: &mut ComputeTiming) {
        for mut request in requests {
            let input = request.request.input("IN").expect("IN").clone();
            let n = i32::from_le_bytes(input.data[..4].try_into().expect("one INT32"));
            if n < 0 {
                request.sink.respond(Err(Error::internal("negative count")));
                continue;
            }
            for _ in 0..n {
                let output = Tensor {
                    name: "OUT".into(),
                    ..input.clone()
                };
                let _ = request
                    .sink
                    .send(Ok(BackendResponse::new(vec![output])), false);
            }
            request.sink.finish();
        }
    }
}

const CONFIG: &str = r#"
name: "repeat"
backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]
output [ { name: "OUT", data_type: TYPE_INT32, dims: [ 1 ] } ]
"#;

fn server(dir: &tempfile::TempDir) -> Server {
    let model = dir.path().join("repeat");
    std::fs::create_dir_all(model.join("1")).unwrap();
    std::fs::write(model.join("config.pbtxt"), CONFIG).unwrap();
    let mut backends = BackendRegistry::default();
    backends.register(Arc::new(Repeat));
    let config = ServerConfig {
        repositories: vec![dir.path().to_path_buf()],
        ..Default::default()
    };
    let server = Server::new(config, backends);
    assert!(server.load_startup_models().repository_errors.is_empty());
    assert!(
        server.model_ready("repeat", None),
        "{:?}",
        server.repository_index(false)
    );
    server
}

fn request(id: &str, n: i32, empty_final: bool) -> ModelInferRequest {
    let mut message = ModelInferRequest {
        model_name: "repeat".into(),
        id: id.into(),
        inputs: vec![InferInputTensor {
            name: "IN".into(),
            datatype: "INT32".into(),
            shape: vec![1],
            ..Default::default()
        }],
        raw_input_contents: vec![Bytes::copy_from_slice(&n.to_le_bytes())],
        ..Default::default()
    };
    if empty_final {
        let enable = InferParameter {
            parameter_choice: Some(ParameterChoice::BoolParam(true)),
        };
        message
            .parameters
            .insert("triton_enable_empty_final_response".into(), enable);
    }
    message
}

/// Serves `message` on a fresh stream context; returns what was written.
async fn run_one(server: &Server, message: ModelInferRequest) -> Vec<ModelStreamInferResponse> {
    let (tx, mut rx) = mpsc::channel(16);
    let context = StreamContext {
        server: server.clone(),
        tx,
        grpc_errors: false,
        trace_context: Default::default(),
        forwarded: Arc::default(),
    };
    let (done, _next) = oneshot::channel();
    let turn = Turn {
        previous: None,
        _done: done,
    };
    serve_request(context, message, turn).await;
    let mut out = Vec::new();
    while let Ok(message) = rx.try_recv() {
        out.push(message.expect("no status"));
    }
    out
}

fn is_final(message: &ModelStreamInferResponse) -> bool {
    let reply = message.infer_response.as_ref().expect("a response");
    matches!(
        reply.parameters[FINAL_RESPONSE].parameter_choice,
        Some(ParameterChoice::BoolParam(true))
    )
}

#[tokio::test]
async fn decoupled_responses_are_marked_and_the_empty_final_is_optional() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);

    let out = run_one(&server, request("a", 3, false)).await;
    assert_eq!(out.len(), 3);
    assert!(
        out.iter()
            .all(|m| !is_final(m) && m.error_message.is_empty())
    );
    let reply = out[0].infer_response.as_ref().unwrap();
    assert_eq!(reply.id, "a");
    assert_eq!(reply.outputs[0].name, "OUT");
    assert_eq!(&reply.raw_output_contents[0][..], &3i32.to_le_bytes());

    let out = run_one(&server, request("b", 2, true)).await;
    assert_eq!(out.len(), 3);
    assert!(!is_final(&out[0]) && !is_final(&out[1]) && is_final(&out[2]));
    let empty = out[2].infer_response.as_ref().unwrap();
    assert_eq!(
        (empty.id.as_str(), empty.model_name.as_str()),
        ("b", "repeat")
    );
    assert!(empty.outputs.is_empty());

    let out = run_one(&server, request("none", 0, true)).await;
    assert_eq!(out.len(), 1);
    assert!(is_final(&out[0]));
}

#[tokio::test]
async fn errors_go_in_error_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let out = run_one(&server, request("bad", -1, false)).await;
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].error_message, "negative count");
    let reply = out[0].infer_response.as_ref().unwrap();
    assert_eq!(reply.id, "bad");
    assert!(is_final(&out[0]));

    let mut unknown = request("unknown", 1, false);
    unknown.model_name = "nope".into();
    let out = run_one(&server, unknown).await;
    assert_eq!(out.len(), 1);
    assert!(
        out[0].error_message.contains("'nope'"),
        "{}",
        out[0].error_message
    );
    let reply = out[0].infer_response.as_ref().unwrap();
    assert_eq!(reply.id, "unknown");
    assert!(reply.parameters.is_empty());
}

#[tokio::test]
async fn a_request_waits_its_turn_only_when_not_decoupled() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let (tx, mut rx) = mpsc::channel(16);
    let context = StreamContext {
        server: server.clone(),
        tx,
        grpc_errors: false,
        trace_context: Default::default(),
        forwarded: Arc::default(),
    };
    // The request before has not written yet: a decoupled request still does.
    let (_held, previous) = oneshot::channel::<()>();
    let (done, _next) = oneshot::channel();
    let turn = Turn {
        previous: Some(previous),
        _done: done,
    };
    let task = tokio::spawn(serve_request(context, request("d", 1, false), turn));
    let first = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await;
    assert!(first.unwrap().unwrap().is_ok());
    task.await.unwrap();
}

#[test]
fn reads_grpc_timeouts() {
    assert_eq!(timeout("5S"), Some(Duration::from_secs(5)));
    assert_eq!(timeout("250m"), Some(Duration::from_millis(250)));
    assert_eq!(timeout("2H"), Some(Duration::from_secs(7200)));
    assert_eq!(timeout("5x"), None);
    assert_eq!(timeout(""), None);
}
