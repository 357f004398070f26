use std::path::Path;

use bytes::Bytes;
use oxiserve_types::{ErrorKind, RequestedOutput, encode_bytes_elements};

use super::*;

/// A configuration from `config.pbtxt` text (backend identity unless given),
/// normalized as the server does, and checked to be valid.
fn pbtxt(text: &str) -> ModelConfig {
    let mut config = oxiserve_config::parse_config(text, Path::new("config.pbtxt"))
        .unwrap()
        .config;
    if config.backend.is_empty() {
        config.backend = "identity".into();
    }
    oxiserve_config::normalize(&mut config, &[]);
    let errors = oxiserve_config::validate(&config, &[]);
    assert!(
        errors.is_empty(),
        "test configuration is invalid: {}",
        oxiserve_config::join_errors(&errors)
    );
    config
}

/// A batching model `m` (max_batch_size 8) with INPUT0 FP32 [4] and INPUT1 FP32 [-1].
fn batching() -> ModelConfig {
    pbtxt(
        r#"name: "m" backend: "identity" max_batch_size: 8
        input [
          { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
          { name: "INPUT1" data_type: TYPE_FP32 dims: [ -1 ] }
        ]
        output [
          { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
          { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ -1 ] }
        ]"#,
    )
}

/// A model `m` without batching, with INPUT0 FP32 [2,3] and INPUT1 FP32 [-1].
fn non_batching() -> ModelConfig {
    pbtxt(
        r#"name: "m" backend: "identity" max_batch_size: 0
        input [
          { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2, 3 ] },
          { name: "INPUT1" data_type: TYPE_FP32 dims: [ -1 ] }
        ]
        output [
          { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2, 3 ] },
          { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ -1 ] }
        ]"#,
    )
}

/// An FP32 tensor of `shape` with the right number of bytes.
fn fp32(name: &str, shape: &[i64]) -> Tensor {
    let n = element_count(shape).unwrap();
    Tensor::new(
        name,
        DataType::Fp32,
        shape.to_vec(),
        Bytes::from(vec![0u8; n * 4]),
    )
}

fn request(inputs: Vec<Tensor>) -> InferRequest {
    InferRequest {
        model_name: "m".into(),
        inputs,
        ..Default::default()
    }
}

fn outputs(names: &[&str]) -> Vec<RequestedOutput> {
    names
        .iter()
        .map(|n| RequestedOutput {
            name: n.to_string(),
            ..Default::default()
        })
        .collect()
}

/// The InvalidArg error's message; fails if the request passed.
fn rejected(config: &ModelConfig, request: InferRequest) -> String {
    match validate(config, request) {
        Ok(valid) => panic!("expected an error, got {valid:?}"),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::InvalidArg, "{e}");
            e.message
        }
    }
}

fn accepted(config: &ModelConfig, request: InferRequest) -> ValidRequest {
    validate(config, request).unwrap_or_else(|e| panic!("expected success, got {e:?}"))
}

/// Asserts `message` contains every one of `parts`.
#[track_caller]
fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "expected {part:?} in the message: {message}"
        );
    }
}

fn shape_of(valid: &ValidRequest, name: &str) -> Vec<i64> {
    valid.request.input(name).unwrap().shape.clone()
}

#[test]
fn valid_batching_request_passes_untouched() {
    let valid = accepted(
        &batching(),
        request(vec![fp32("INPUT0", &[2, 4]), fp32("INPUT1", &[2, 5])]),
    );
    assert_eq!(valid.batch_size, 2);
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 4]);
    assert_eq!(shape_of(&valid, "INPUT1"), vec![2, 5]);
    assert_eq!(valid.request.input("INPUT0").unwrap().data.len(), 32);
    assert_eq!(valid.request.model_name, "m");
}

#[test]
fn unknown_input_is_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[1, 4]), fp32("BOGUS", &[1, 4])]),
    );
    assert_mentions(&message, &["'BOGUS'", "'m'", "unexpected"]);
    // One input too many is refused by count first, naming them all.
    let message = rejected(
        &batching(),
        request(vec![
            fp32("INPUT0", &[1, 4]),
            fp32("INPUT1", &[1, 1]),
            fp32("BOGUS", &[1, 4]),
        ]),
    );
    assert_mentions(&message, &["'BOGUS'", "'m'", "expected 2 inputs", "got 3"]);
}

#[test]
fn duplicate_input_is_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[1, 4]), fp32("INPUT0", &[1, 4])]),
    );
    assert_mentions(&message, &["'INPUT0'", "already"]);
    let message = rejected(
        &batching(),
        request(vec![
            fp32("INPUT0", &[1, 4]),
            fp32("INPUT1", &[1, 1]),
            fp32("INPUT0", &[1, 4]),
        ]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'"]);
}

#[test]
fn errors_carry_the_request_id() {
    let mut req = request(vec![fp32("INPUT0", &[1, 5]), fp32("INPUT1", &[1, 1])]);
    req.id = "req-17".into();
    let message = rejected(&batching(), req);
    assert_mentions(&message, &["req-17", "'INPUT0'", "'m'"]);
}

#[test]
fn missing_required_input_is_rejected() {
    let message = rejected(&batching(), request(vec![fp32("INPUT0", &[1, 4])]));
    assert_mentions(&message, &["'INPUT1'", "'m'", "missing"]);
    // The input that was given is not reported as missing.
    let missing = &message[message.find("missing").unwrap()..];
    assert!(!missing.contains("'INPUT0'"), "{message}");

    let message = rejected(&batching(), request(vec![]));
    assert_mentions(&message, &["'INPUT0'", "'INPUT1'", "missing"]);
}

#[test]
fn optional_input_may_be_missing() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 4
        input [
          { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] },
          { name: "INPUT1" data_type: TYPE_FP32 dims: [ 2 ] optional: true }
        ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[3, 2])]));
    assert_eq!(valid.batch_size, 3);
    assert!(valid.request.input("INPUT1").is_none());
    // Given, it is still checked.
    let message = rejected(
        &config,
        request(vec![fp32("INPUT0", &[3, 2]), fp32("INPUT1", &[3, 5])]),
    );
    assert_mentions(&message, &["'INPUT1'", "'m'", "shape"]);
    // The required one is still required.
    let message = rejected(&config, request(vec![fp32("INPUT1", &[3, 2])]));
    assert_mentions(&message, &["'INPUT0'", "missing"]);
}

#[test]
fn wrong_datatype_is_rejected() {
    let int32 = Tensor::new(
        "INPUT0",
        DataType::Int32,
        vec![1, 4],
        Bytes::from(vec![0u8; 16]),
    );
    let message = rejected(&batching(), request(vec![int32, fp32("INPUT1", &[1, 1])]));
    assert_mentions(&message, &["'INPUT0'", "'m'", "INT32", "FP32", "data-type"]);
}

#[test]
fn batching_model_needs_a_batch_dimension() {
    // A scalar has no batch dimension at all.
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[]), fp32("INPUT1", &[1, 1])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[-1,4]"]);
    // The configured dims alone: the 4 is taken as the batch, nothing is left for dims.
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[4]), fp32("INPUT1", &[4, 1])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[-1,4]", "[4]"]);
}

/// Triton checks only the upper bound of the batch size.
#[test]
fn batch_size_zero_is_not_refused() {
    let valid = accepted(
        &batching(),
        request(vec![fp32("INPUT0", &[0, 4]), fp32("INPUT1", &[0, 1])]),
    );
    assert_eq!(valid.batch_size, 0);
    assert_eq!(shape_of(&valid, "INPUT0"), vec![0, 4]);
}

#[test]
fn batch_over_max_batch_size_is_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[9, 4]), fp32("INPUT1", &[9, 1])]),
    );
    assert_mentions(&message, &["batch-size", "'m'", "8"]);
    // max_batch_size itself is fine.
    let valid = accepted(
        &batching(),
        request(vec![fp32("INPUT0", &[8, 4]), fp32("INPUT1", &[8, 1])]),
    );
    assert_eq!(valid.batch_size, 8);
}

#[test]
fn inputs_with_different_batch_sizes_are_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[2, 4]), fp32("INPUT1", &[3, 1])]),
    );
    assert_mentions(&message, &["'INPUT1'", "'m'", "batch size"]);
}

#[test]
fn variable_dims_accept_any_size() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 2
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 3, -1 ] } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 3, -1 ] } ]"#,
    );
    for shape in [[1, 1, 3, 1], [2, 7, 3, 5], [1, 0, 3, 2]] {
        let valid = accepted(&config, request(vec![fp32("INPUT0", &shape)]));
        assert_eq!(shape_of(&valid, "INPUT0"), shape.to_vec());
    }
    // The fixed dimension between them is still checked.
    let message = rejected(&config, request(vec![fp32("INPUT0", &[1, 7, 4, 5])]));
    assert_mentions(&message, &["'INPUT0'", "'m'", "[-1,-1,3,-1]", "[1,7,4,5]"]);
}

#[test]
fn negative_request_dims_are_rejected_even_for_variable_dims() {
    let empty = Tensor::new("INPUT1", DataType::Fp32, vec![1, -1], Bytes::new());
    let message = rejected(&batching(), request(vec![fp32("INPUT0", &[1, 4]), empty]));
    assert_mentions(&message, &["'INPUT1'", "'m'", "shape"]);
}

#[test]
fn wrong_rank_is_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[1, 2, 2]), fp32("INPUT1", &[1, 1])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[-1,4]", "[1,2,2]"]);
    let message = rejected(
        &non_batching(),
        request(vec![fp32("INPUT0", &[6]), fp32("INPUT1", &[1])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[2,3]", "[6]"]);
}

#[test]
fn wrong_fixed_dim_is_rejected() {
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[1, 5]), fp32("INPUT1", &[1, 1])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[-1,4]", "[1,5]"]);
}

#[test]
fn non_batching_model_takes_the_configured_shape_exactly() {
    let valid = accepted(
        &non_batching(),
        request(vec![fp32("INPUT0", &[2, 3]), fp32("INPUT1", &[7])]),
    );
    assert_eq!(valid.batch_size, 1);
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 3]);
    // No implicit batch dimension.
    let message = rejected(
        &non_batching(),
        request(vec![fp32("INPUT0", &[1, 2, 3]), fp32("INPUT1", &[7])]),
    );
    assert_mentions(&message, &["'INPUT0'", "'m'", "shape", "[2,3]", "[1,2,3]"]);
    // Nor a batch-size check: a first dimension beyond any batch size is fine.
    let valid = accepted(
        &non_batching(),
        request(vec![fp32("INPUT0", &[2, 3]), fp32("INPUT1", &[100])]),
    );
    assert_eq!(valid.batch_size, 1);
}

#[test]
fn byte_size_mismatch_is_rejected() {
    let short = Tensor::new(
        "INPUT0",
        DataType::Fp32,
        vec![1, 4],
        Bytes::from(vec![0u8; 15]),
    );
    let message = rejected(&batching(), request(vec![short, fp32("INPUT1", &[1, 1])]));
    assert_mentions(&message, &["'INPUT0'", "'m'", "byte size", "16", "15"]);

    let long = Tensor::new(
        "INPUT1",
        DataType::Fp32,
        vec![2, 3],
        Bytes::from(vec![0u8; 28]),
    );
    let message = rejected(&batching(), request(vec![fp32("INPUT0", &[2, 4]), long]));
    assert_mentions(&message, &["'INPUT1'", "'m'", "byte size", "24", "28"]);
}

#[test]
fn byte_size_uses_the_element_size_of_each_type() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 0
        input [
          { name: "A" data_type: TYPE_FP16 dims: [ 3 ] },
          { name: "B" data_type: TYPE_INT64 dims: [ 3 ] },
          { name: "C" data_type: TYPE_BOOL dims: [ 3 ] }
        ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP16 dims: [ 3 ] } ]"#,
    );
    let tensor = |name: &str, datatype, bytes: usize| {
        Tensor::new(name, datatype, vec![3], Bytes::from(vec![0u8; bytes]))
    };
    accepted(
        &config,
        request(vec![
            tensor("A", DataType::Fp16, 6),
            tensor("B", DataType::Int64, 24),
            tensor("C", DataType::Bool, 3),
        ]),
    );
    let message = rejected(
        &config,
        request(vec![
            tensor("A", DataType::Fp16, 6),
            tensor("B", DataType::Int64, 12),
            tensor("C", DataType::Bool, 3),
        ]),
    );
    assert_mentions(&message, &["'B'", "'m'", "24", "12"]);
}

fn bytes_model() -> ModelConfig {
    pbtxt(
        r#"name: "m" max_batch_size: 4
        input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 2 ] } ]
        output [ { name: "OUT" data_type: TYPE_STRING dims: [ 2 ] } ]"#,
    )
}

fn bytes_tensor(shape: &[i64], data: impl Into<Bytes>) -> Tensor {
    Tensor::new("TEXT", DataType::Bytes, shape.to_vec(), data.into())
}

#[test]
fn bytes_inputs_with_a_valid_layout_pass() {
    let data = encode_bytes_elements(["a", "", "ccc", "dddd"]);
    let valid = accepted(
        &bytes_model(),
        request(vec![bytes_tensor(&[2, 2], data.clone())]),
    );
    assert_eq!(valid.batch_size, 2);
    assert_eq!(valid.request.inputs[0].data, data);
}

#[test]
fn bytes_length_prefix_past_the_end_is_rejected() {
    // The second element claims 100 bytes but 2 follow.
    let mut data = encode_bytes_elements(["ab"]).to_vec();
    data.extend_from_slice(&100u32.to_le_bytes());
    data.extend_from_slice(b"xy");
    let message = rejected(&bytes_model(), request(vec![bytes_tensor(&[1, 2], data)]));
    assert_mentions(&message, &["'TEXT'", "incomplete", "100", "2 bytes"]);
    // A length prefix cut short.
    let mut data = encode_bytes_elements(["ab"]).to_vec();
    data.extend_from_slice(&[1, 0]);
    let message = rejected(&bytes_model(), request(vec![bytes_tensor(&[1, 2], data)]));
    assert_mentions(&message, &["'TEXT'", "'m'", "incomplete", "length"]);
}

#[test]
fn bytes_element_count_must_match_the_shape() {
    let message = rejected(
        &bytes_model(),
        request(vec![bytes_tensor(
            &[1, 2],
            encode_bytes_elements(["only one"]),
        )]),
    );
    assert_mentions(&message, &["'TEXT'", "'m'", "string elements", "2", "1"]);
    let message = rejected(
        &bytes_model(),
        request(vec![bytes_tensor(
            &[1, 2],
            encode_bytes_elements(["a", "b", "c"]),
        )]),
    );
    assert_mentions(&message, &["'TEXT'", "'m'", "string elements", "2", "3"]);
    // An empty buffer for elements that should be there.
    let message = rejected(
        &bytes_model(),
        request(vec![bytes_tensor(&[1, 2], Bytes::new())]),
    );
    assert_mentions(&message, &["'TEXT'", "'m'", "string elements"]);
}

/// Empty strings are elements too.
#[test]
fn bytes_empty_elements_count() {
    let data = encode_bytes_elements(["", ""]);
    let valid = accepted(&bytes_model(), request(vec![bytes_tensor(&[1, 2], data)]));
    assert_eq!(valid.request.inputs[0].data.len(), 8);
}

#[test]
fn reshape_without_batching() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 0
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 6 ] reshape: { shape: [ 2, 3 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 6 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[6])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 3]);
    assert_eq!(valid.request.inputs[0].data.len(), 24);
    // The request is checked against dims, not against the reshape.
    let message = rejected(&config, request(vec![fp32("INPUT0", &[2, 3])]));
    assert_mentions(&message, &["'INPUT0'", "'m'", "[6]", "[2,3]"]);
}

#[test]
fn reshape_with_batching_keeps_the_batch_dimension() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 8
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2, 2 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[3, 4])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![3, 2, 2]);
    assert_eq!(valid.batch_size, 3);
}

#[test]
fn reshape_to_a_scalar_per_batch_item() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 8
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]"#,
    );
    assert!(config.input[0].reshape.is_some());
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[5, 1])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![5]);
}

#[test]
fn reshape_with_a_variable_dimension() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 8
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 6 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[2, 5, 2, 3])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 5, 6]);
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[1, 1, 2, 3])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![1, 1, 6]);
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[1, 0, 2, 3])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![1, 0, 6]);

    let config = pbtxt(
        r#"name: "m" max_batch_size: 0
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2, 2, -1 ] reshape: { shape: [ 4, -1, 1 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[2, 2, 7])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![4, 7, 1]);
}

/// Triton gives each -1 of `reshape` the request's size of the matching -1 of
/// `dims`, in order (InferenceRequest::Normalize); config validation makes the
/// fixed segments between them equal.
#[test]

fn reshape_with_two_variable_dimensions_maps_them_in_order() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 8
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, -1 ] reshape: { shape: [ -1, 2, -1, 1 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[1, 3, 2, 5])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![1, 3, 2, 5, 1]);

    let config = pbtxt(
        r#"name: "m" max_batch_size: 0
        input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, -1 ] reshape: { shape: [ -1, -1 ] } } ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]"#,
    );
    let valid = accepted(&config, request(vec![fp32("INPUT0", &[2, 3])]));
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 3]);
}

#[test]
fn inputs_without_reshape_keep_their_shape() {
    let config = pbtxt(
        r#"name: "m" max_batch_size: 8
        input [
          { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } },
          { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] }
        ]
        output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2, 2 ] } ]"#,
    );
    let valid = accepted(
        &config,
        request(vec![fp32("INPUT1", &[2, 4]), fp32("INPUT0", &[2, 4])]),
    );
    assert_eq!(shape_of(&valid, "INPUT0"), vec![2, 2, 2]);
    assert_eq!(shape_of(&valid, "INPUT1"), vec![2, 4]);
    // Inputs keep the order the client sent them in.
    let names: Vec<&str> = valid
        .request
        .inputs
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["INPUT1", "INPUT0"]);
}

fn valid_batching_request() -> InferRequest {
    request(vec![fp32("INPUT0", &[1, 4]), fp32("INPUT1", &[1, 2])])
}

#[test]
fn all_outputs_are_produced_when_none_is_asked_for() {
    let valid = accepted(&batching(), valid_batching_request());
    assert_eq!(valid.requested_outputs, ["OUTPUT0", "OUTPUT1"]);
}

#[test]
fn asked_outputs_are_resolved_in_the_order_asked() {
    let mut req = valid_batching_request();
    req.outputs = outputs(&["OUTPUT1"]);
    assert_eq!(accepted(&batching(), req).requested_outputs, ["OUTPUT1"]);

    let mut req = valid_batching_request();
    req.outputs = outputs(&["OUTPUT1", "OUTPUT0"]);
    assert_eq!(
        accepted(&batching(), req).requested_outputs,
        ["OUTPUT1", "OUTPUT0"]
    );
}

#[test]
fn duplicate_asked_outputs_are_collapsed() {
    let mut req = valid_batching_request();
    req.outputs = outputs(&["OUTPUT1", "OUTPUT0", "OUTPUT1", "OUTPUT0"]);
    assert_eq!(
        accepted(&batching(), req).requested_outputs,
        ["OUTPUT1", "OUTPUT0"]
    );
}

#[test]
fn unknown_output_is_rejected() {
    let mut req = valid_batching_request();
    req.outputs = outputs(&["OUTPUT0", "NOPE"]);
    let message = rejected(&batching(), req);
    assert_mentions(&message, &["'NOPE'", "'m'", "output"]);
}

#[test]
fn the_request_keeps_its_id_outputs_and_parameters() {
    let mut req = valid_batching_request();
    req.id = "req-7".into();
    req.outputs = vec![RequestedOutput {
        name: "OUTPUT0".into(),
        class_count: 2,
        ..Default::default()
    }];
    req.parameters
        .insert("priority".into(), oxiserve_types::ParameterValue::Uint(1));
    let valid = accepted(&batching(), req.clone());
    assert_eq!(valid.request.id, "req-7");
    assert_eq!(valid.request.outputs, req.outputs);
    assert_eq!(valid.request.parameters, req.parameters);
}

#[test]
fn batch_size_is_reported() {
    let valid = accepted(
        &batching(),
        request(vec![fp32("INPUT0", &[5, 4]), fp32("INPUT1", &[5, 3])]),
    );
    assert_eq!(valid.batch_size, 5);
    let valid = accepted(
        &non_batching(),
        request(vec![fp32("INPUT0", &[2, 3]), fp32("INPUT1", &[9])]),
    );
    assert_eq!(valid.batch_size, 1);
}

/// As in Triton's InferenceRequest::Normalize, the batch size of every input
/// is checked before any input's datatype or shape.
#[test]
fn batch_sizes_are_checked_before_shapes() {
    let wrong_type = Tensor::new(
        "INPUT0",
        DataType::Int32,
        vec![1, 4],
        Bytes::from(vec![0u8; 16]),
    );
    let message = rejected(
        &batching(),
        request(vec![wrong_type, fp32("INPUT1", &[9, 1])]),
    );
    assert_mentions(&message, &["'INPUT1'", "'m'", "batch size"]);
    let message = rejected(
        &batching(),
        request(vec![fp32("INPUT0", &[1, 5]), fp32("INPUT1", &[9, 1])]),
    );
    assert_mentions(&message, &["'INPUT1'", "'m'", "batch size"]);
}

mod properties;
