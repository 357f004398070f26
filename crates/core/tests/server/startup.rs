//! Loading at start-up and inference.

use crate::common::*;

#[tokio::test]
async fn startup_loads_models_and_infers_round_trip() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    assert!(server.is_live());
    assert!(server.is_ready());
    assert!(server.model_ready("id", None));
    assert!(server.model_ready("id", Some(1)));

    let mut req = request("id", None, &[1.5, -2.0, 3.25]);
    req.id = "req-42".into();
    // One final event carries the one response; the stream ends after it.
    let mut stream = server.infer(req).unwrap();
    let event = stream.next().await.unwrap();
    assert!(event.is_final);
    assert!(stream.next().await.is_none());
    let response = event.response.unwrap().unwrap();
    assert_eq!(response.model_name, "id");
    assert_eq!(response.model_version, 1);
    assert_eq!(response.id, "req-42");
    assert_eq!(response.outputs.len(), 1);
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![1, 3]);
    assert_eq!(values(out), [1.5, -2.0, 3.25]);

    let index = server.repository_index(false);
    assert_eq!(
        index,
        vec![IndexEntry {
            name: "id".into(),
            version: Some(1),
            state: Some(ModelState::Ready),
            reason: String::new(),
        }]
    );
}

#[tokio::test]
async fn a_batch_round_trips_row_by_row() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![3, 2]);
    assert_eq!(values(out), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[tokio::test]
async fn bytes_tensors_round_trip() {
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
"#;
    let dir = repo(&[("text/config.pbtxt", config), ("text/1/", "")]);
    let server = server(&dir);
    let data = encode_bytes_elements(["héllo", "", "wörld"]);
    let req = InferRequest {
        model_name: "text".into(),
        inputs: vec![Tensor::new("INPUT0", DataType::Bytes, vec![3], data)],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![3]);
    assert_eq!(strings(out), ["héllo", "", "wörld"]);
}

#[tokio::test]
async fn metadata_and_config_of_a_loaded_model() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let metadata = server.model_metadata("id", None).unwrap();
    assert_eq!(metadata.name, "id");
    assert_eq!(metadata.versions, ["1"]);
    assert_eq!(metadata.platform, "identity");
    assert_eq!(metadata.inputs[0].name, "INPUT0");
    assert_eq!(metadata.inputs[0].datatype, "FP32");
    assert_eq!(metadata.inputs[0].shape, vec![-1, -1]);
    assert_eq!(metadata.outputs[0].name, "OUTPUT0");
    let config = server.model_config("id", Some(1)).unwrap();
    assert_eq!(config.name, "id");
    assert_eq!(config.max_batch_size, 8);
    assert_error(
        server.model_metadata("nope", None),
        ErrorKind::NotFound,
        &["'nope'"],
    );
}
