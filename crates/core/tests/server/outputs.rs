//! Classification, output selection and ordering, reshape.

use crate::common::*;

#[tokio::test]
async fn classification_with_class_count_and_labels() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" } ]
"#;
    let dir = repo(&[
        ("cls/config.pbtxt", config),
        ("cls/labels.txt", "cat\ndog\nbird\nfish\n"),
        ("cls/1/", ""),
    ]);
    let server = server(&dir);
    let classify = |k: u32| InferRequest {
        model_name: "cls".into(),
        inputs: vec![fp32(
            "INPUT0",
            &[2, 4],
            &[0.1, 0.7, 0.05, 0.15, 4.0, 1.0, 3.0, 2.0],
        )],
        outputs: vec![RequestedOutput {
            name: "OUTPUT0".into(),
            class_count: k,
            ..Default::default()
        }],
        ..Default::default()
    };
    let response = infer(&server, classify(2)).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![2, 2]);
    assert_eq!(
        strings(out),
        [
            "0.700000:1:dog",
            "0.150000:3:fish",
            "4.000000:0:cat",
            "3.000000:2:bird"
        ]
    );
    // More classes than there are: all of them.
    let response = infer(&server, classify(10)).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![2, 4]);
    // Without class_count, the raw tensor.
    let response = infer(&server, classify(0)).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.datatype, DataType::Fp32);
    assert_eq!(out.shape, vec![2, 4]);
}

#[tokio::test]
async fn classification_without_labels_or_batching() {
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]
"#;
    let dir = repo(&[("cls/config.pbtxt", config), ("cls/1/", "")]);
    let server = server(&dir);
    let data: Vec<u8> = [5i32, -1, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    let req = InferRequest {
        model_name: "cls".into(),
        inputs: vec![Tensor::new(
            "INPUT0",
            DataType::Int32,
            vec![3],
            Bytes::from(data),
        )],
        outputs: vec![RequestedOutput {
            name: "OUTPUT0".into(),
            class_count: 2,
            ..Default::default()
        }],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![2]);
    // Integers print as they are.
    assert_eq!(strings(out), ["9:2", "5:0"]);
}

/// Three inputs, three outputs: OUTPUTn echoes INPUTn.
const TRIPLE: &str = r#"
backend: "identity"
max_batch_size: 2
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "INPUT2" data_type: TYPE_FP32 dims: [ 1 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "OUTPUT2" data_type: TYPE_FP32 dims: [ 1 ] }
]
"#;

fn triple_request(outputs: &[&str]) -> InferRequest {
    InferRequest {
        model_name: "triple".into(),
        // Inputs in another order than the configuration's.
        inputs: vec![
            fp32("INPUT2", &[1, 1], &[2.0]),
            fp32("INPUT0", &[1, 1], &[0.0]),
            fp32("INPUT1", &[1, 1], &[1.0]),
        ],
        outputs: outputs
            .iter()
            .map(|n| RequestedOutput {
                name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn output_names(response: &InferResponse) -> Vec<&str> {
    response.outputs.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn outputs_come_in_configuration_order() {
    let dir = repo(&[("triple/config.pbtxt", TRIPLE), ("triple/1/", "")]);
    let server = server(&dir);
    let response = infer(&server, triple_request(&[])).await.unwrap();
    assert_eq!(output_names(&response), ["OUTPUT0", "OUTPUT1", "OUTPUT2"]);
    for (i, name) in ["OUTPUT0", "OUTPUT1", "OUTPUT2"].iter().enumerate() {
        assert_eq!(values(output(&response, name)), [i as f32]);
    }
    // Only the outputs asked for; the identity backend answers in its
    // configuration's order whatever order they were asked in.
    let response = infer(&server, triple_request(&["OUTPUT2", "OUTPUT0"]))
        .await
        .unwrap();
    assert_eq!(output_names(&response), ["OUTPUT0", "OUTPUT2"]);
    assert_eq!(values(output(&response, "OUTPUT2")), [2.0]);
    // Asking twice gives the output once.
    let response = infer(&server, triple_request(&["OUTPUT1", "OUTPUT1"]))
        .await
        .unwrap();
    assert_eq!(output_names(&response), ["OUTPUT1"]);
    // An unknown output is refused.
    assert_error(
        server.infer(triple_request(&["OUTPUT9"])),
        ErrorKind::InvalidArg,
        &["'OUTPUT9'", "'triple'"],
    );
}

#[tokio::test]
async fn reshape_is_applied_for_the_backend_and_undone_for_the_client() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[3, 4], &[1.0; 12])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    // The backend saw [3,2,2]; the client gets the configured dims back.
    assert_eq!(out.shape, vec![3, 4]);
    assert_eq!(out.data.len(), 48);
}

#[tokio::test]
async fn input_reshape_is_what_the_backend_gets() {
    // The output is not reshaped: it shows what the backend received.
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 6 ] } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[5, 2, 3], &[0.5; 30])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![5, 6]);
}

/// Triton (InferenceResponse::Output::Reshape) maps the reshape's -1
/// dimensions back onto the dims' -1 dimensions, in order.
#[tokio::test]

async fn output_reshape_with_a_variable_dimension_is_undone() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[1, 5, 2, 3], &[0.5; 30])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![1, 5, 2, 3]);
}
