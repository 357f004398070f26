use bytes::Bytes;
use oxiserve_core::TensorMetadata;
use oxiserve_types::{DataType, ErrorKind, InferResponse, ParameterValue, Tensor};

use super::request::spread;
use super::*;

fn input(name: &str, datatype: &str, shape: &[i64]) -> TensorMetadata {
    TensorMetadata {
        name: name.to_string(),
        datatype: datatype.to_string(),
        shape: shape.to_vec(),
    }
}

fn inputs() -> Vec<TensorMetadata> {
    vec![
        input("PROMPT", "BYTES", &[1, 1]),
        input("STREAM", "BOOL", &[1, 1]),
        input("IDS", "INT32", &[-1, -1]),
    ]
}

fn decode(body: &str) -> Result<oxiserve_types::InferRequest, oxiserve_types::Error> {
    decode_generate_request("llm", Some(2), &inputs(), body.as_bytes())
}

#[test]
fn members_named_like_inputs_are_inputs() {
    let request = decode(r#"{"PROMPT":"hi","STREAM":[true],"IDS":[1,2,3],"id":"7"}"#).unwrap();
    assert_eq!(
        (request.model_name.as_str(), request.model_version),
        ("llm", Some(2))
    );
    assert_eq!(request.id, "7");
    let prompt = &request.inputs[0];
    assert_eq!(
        (prompt.datatype, prompt.shape.as_slice()),
        (DataType::Bytes, &[1, 1][..])
    );
    assert_eq!(&prompt.data[..], b"\x02\0\0\0hi");
    assert_eq!(&request.inputs[1].data[..], [1]);
    // The innermost variable dimension takes the elements, the others are 1.
    assert_eq!(request.inputs[2].shape, [1, 3]);
    // "id" is a parameter too, as in Triton.
    assert_eq!(request.parameters["id"], ParameterValue::String("7".into()));
}

#[test]
fn other_members_and_the_parameters_object_are_parameters() {
    let request =
        decode(r#"{"PROMPT":"hi","t":0.5,"n":3,"b":true,"parameters":{"STREAM":false,"s":"x"}}"#)
            .unwrap();
    assert_eq!(
        request.inputs.len(),
        2,
        "STREAM comes from the parameters object"
    );
    assert_eq!(request.parameters["t"], ParameterValue::Double(0.5));
    assert_eq!(request.parameters["n"], ParameterValue::Int(3));
    assert_eq!(request.parameters["b"], ParameterValue::Bool(true));
    assert_eq!(request.parameters["s"], ParameterValue::String("x".into()));
}

#[test]
fn errors_carry_tritons_words_and_kinds() {
    let cases = [
        (
            r#"{"PROMPT":5}"#,
            ErrorKind::Internal,
            "Unable to parse JSON bytes array: attempt to access JSON non-string as string",
        ),
        (
            r#"{"STREAM":"x"}"#,
            ErrorKind::Internal,
            "Unable to parse 'data': attempt to access JSON non-boolean as boolean",
        ),
        (
            r#"{"IDS":[1.5]}"#,
            ErrorKind::Internal,
            "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
        ),
        (
            r#"{"IDS":[[1,2]]}"#,
            ErrorKind::Internal,
            "Unable to parse 'data': Shape does not match true shape of 'data' field",
        ),
        (
            r#"{"PROMPT":["a","b"]}"#,
            ErrorKind::InvalidArg,
            "The schema can not convert input 'PROMPT' to tensor with proper shape",
        ),
        (
            r#"{"x":null}"#,
            ErrorKind::InvalidArg,
            "parameter 'x' has invalid type. It should be either 'int', 'bool', or 'string'.",
        ),
        (
            r#"{"id":1}"#,
            ErrorKind::Internal,
            "Unable to parse 'id': attempt to access JSON non-string as string",
        ),
        (
            r#"{"parameters":[]}"#,
            ErrorKind::Internal,
            "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object",
        ),
        (
            r#"{"parameters":{"o":{}}}"#,
            ErrorKind::InvalidArg,
            "Converting keyword: 'parameters': parameter 'o' has invalid type. It should be either 'int', 'bool', or 'string'.",
        ),
        (
            r#"{"PROMPT":"a","PROMPT":"b"}"#,
            ErrorKind::InvalidArg,
            "[request id: <id_unknown>] input 'PROMPT' already exists in request",
        ),
        (
            r#"{"id":"r","STREAM":true,"parameters":{"STREAM":true}}"#,
            ErrorKind::InvalidArg,
            "Converting keyword: 'parameters': [request id: r] input 'STREAM' already exists in request",
        ),
        (
            "[1]",
            ErrorKind::Internal,
            "attempt to get members for non-object",
        ),
    ];
    for (body, kind, message) in cases {
        let error = decode(body).unwrap_err();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (kind, message),
            "{body}"
        );
    }
    let error = decode("{").unwrap_err();
    assert!(
        error
            .message
            .starts_with("failed to parse the request JSON buffer")
    );
}

#[test]
fn an_input_named_parameters_is_refused() {
    let inputs = [input("parameters", "INT32", &[1])];
    let error = decode_generate_request("m", None, &inputs, br#"{"parameters":{}}"#).unwrap_err();
    assert_eq!(
        error.message,
        "Keyword 'parameters' for nested schema also given as input tensor name"
    );
}

#[test]
fn shapes_spread_the_element_count() {
    assert_eq!(spread(&[1, 1], 1), Some(vec![1, 1]));
    assert_eq!(spread(&[-1], 0), Some(vec![0]));
    assert_eq!(spread(&[-1, 3], 6), Some(vec![2, 3]));
    assert_eq!(spread(&[-1, -1], 4), Some(vec![1, 4]));
    assert_eq!(spread(&[2], 3), None);
    assert_eq!(spread(&[2, -1], 0), Some(vec![2, 0]));
    assert_eq!(spread(&[2], 0), None);
    assert_eq!(spread(&[0], 0), None);
}

fn output(name: &str, datatype: DataType, shape: Vec<i64>, data: &[u8]) -> Tensor {
    Tensor::new(name, datatype, shape, Bytes::copy_from_slice(data))
}

#[test]
fn responses_are_flat_objects_sorted_by_name() {
    let mut response = InferResponse {
        model_name: "llm".into(),
        model_version: 3,
        id: "42".into(),
        outputs: vec![
            output("TEXT", DataType::Bytes, vec![1, 1], b"\x02\0\0\0ok"),
            output(
                "LOGITS",
                DataType::Fp32,
                vec![2],
                &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40],
            ),
            output("NONE", DataType::Int32, vec![0], &[]),
        ],
        ..Default::default()
    };
    response
        .parameters
        .insert("tokens".into(), ParameterValue::Int(2));
    response
        .parameters
        .insert("model_name".into(), ParameterValue::Bool(true));
    let json = String::from_utf8(encode_generate_response(&response).unwrap()).unwrap();
    // A reserved name keeps its value; one element is a scalar.
    assert_eq!(
        json,
        r#"{"LOGITS":[1.0,2.0],"NONE":[],"TEXT":"ok","id":"42","model_name":"llm","model_version":"3","tokens":2}"#
    );
}

#[test]
fn outputs_json_cannot_carry_are_errors() {
    let response = InferResponse {
        outputs: vec![output("H", DataType::Fp16, vec![1], &[0, 0])],
        ..Default::default()
    };
    let error = encode_generate_response(&response).unwrap_err();
    assert!(
        error
            .message
            .starts_with("sending FP16 data via JSON is not supported")
    );
}
