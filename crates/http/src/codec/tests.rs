//! Request decoding and response encoding end to end, against bodies and
//! answers captured from Triton 2.51.

use bytes::{BufMut, Bytes, BytesMut};
use oxiserve_types::{
    DataType, ErrorKind, InferRequest, InferResponse, ParameterValue, Parameters, Tensor,
    encode_bytes_elements,
};

use super::{EncodedResponse, decode_infer_request, encode_infer_response, is_raw_binary_request};

/// A JSON-only request body.
fn decode_json(body: &str) -> Result<InferRequest, oxiserve_types::Error> {
    decode_infer_request("m", None, Bytes::copy_from_slice(body.as_bytes()), None)
}

/// A body with a JSON header and binary data, and its header length.
fn binary_body(header: &str, binary: &[&[u8]]) -> (Bytes, usize) {
    let mut body = BytesMut::from(header.as_bytes());
    for chunk in binary {
        body.put_slice(chunk);
    }
    (body.freeze(), header.len())
}

fn decode_binary(header: &str, binary: &[&[u8]]) -> Result<InferRequest, oxiserve_types::Error> {
    let (body, length) = binary_body(header, binary);
    decode_infer_request("m", Some(1), body, Some(length))
}

fn message(result: Result<InferRequest, oxiserve_types::Error>) -> String {
    result.unwrap_err().message
}

fn le_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The body as one buffer, as the client receives it.
fn body(encoded: &EncodedResponse) -> Vec<u8> {
    encoded.clone().into_chunks().flatten().collect()
}

fn json_text(encoded: &EncodedResponse) -> &str {
    std::str::from_utf8(&encoded.json).unwrap()
}

// ---------------------------------------------------------------- requests

#[test]
fn decodes_a_json_request() {
    let request = decode_infer_request(
        "identity_fp32",
        Some(2),
        Bytes::from_static(
            br#"{"id":"my-request-1","parameters":{"foo":"bar","n":7,"flag":true,"f":1.5},
                "inputs":[{"name":"INPUT0","shape":[1,3],"datatype":"FP32",
                           "parameters":{"custom":"x"},"data":[[1,2,3]]}],
                "outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true,"classification":2}}]}"#,
        ),
        None,
    )
    .unwrap();
    assert_eq!(request.model_name, "identity_fp32");
    assert_eq!(request.model_version, Some(2));
    assert_eq!(request.id, "my-request-1");
    let mut parameters = Parameters::new();
    parameters.insert("foo".into(), ParameterValue::String("bar".into()));
    parameters.insert("n".into(), ParameterValue::Int(7));
    parameters.insert("flag".into(), ParameterValue::Bool(true));
    parameters.insert("f".into(), ParameterValue::Double(1.5));
    assert_eq!(request.parameters, parameters);

    let input = &request.inputs[0];
    assert_eq!(input.name, "INPUT0");
    assert_eq!(input.datatype, DataType::Fp32);
    assert_eq!(input.shape, vec![1, 3]);
    assert_eq!(input.data, le_f32(&[1.0, 2.0, 3.0]));
    assert_eq!(
        input.parameters.get("custom"),
        Some(&ParameterValue::String("x".into()))
    );

    let output = &request.outputs[0];
    assert_eq!(output.name, "OUTPUT0");
    assert_eq!(output.class_count, 2);
    assert_eq!(
        output.parameters.get("binary_data"),
        Some(&ParameterValue::Bool(true))
    );
    assert_eq!(
        output.parameters.get("classification"),
        Some(&ParameterValue::Int(2))
    );
}

#[test]
fn optional_members_may_be_absent() {
    let request =
        decode_json(r#"{"inputs":[{"name":"I","shape":[0],"datatype":"INT8","data":[]}]}"#)
            .unwrap();
    assert_eq!(request.id, "");
    assert!(request.parameters.is_empty());
    assert!(request.outputs.is_empty());
    assert!(request.inputs[0].data.is_empty());
    // Unknown members are ignored, at every level.
    let request = decode_json(
        r#"{"x":{"y":[1]},"inputs":[{"z":1,"name":"I","shape":[1],"datatype":"INT8","data":[1]}],
            "outputs":[{"name":"O","other":2}]}"#,
    )
    .unwrap();
    assert_eq!(request.inputs[0].data, vec![1]);
    assert_eq!(request.outputs[0].name, "O");
    assert_eq!(request.outputs[0].class_count, 0);
}

#[test]
fn decodes_every_datatype_from_json_and_binary() {
    // (datatype, JSON data, the same elements as raw bytes)
    let cases: Vec<(DataType, &str, Vec<u8>)> = vec![
        (DataType::Bool, "[true,false,true]", vec![1, 0, 1]),
        (DataType::Uint8, "[0,1,255]", vec![0, 1, 255]),
        (
            DataType::Uint16,
            "[0,1,65535]",
            [0u16, 1, 65535]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Uint32,
            "[0,1,4294967295]",
            [0u32, 1, u32::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Uint64,
            "[0,1,18446744073709551615]",
            [0u64, 1, u64::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Int8,
            "[-128,0,127]",
            [-128i8, 0, 127]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Int16,
            "[-32768,0,32767]",
            [i16::MIN, 0, i16::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Int32,
            "[-2147483648,0,2147483647]",
            [i32::MIN, 0, i32::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Int64,
            "[-9223372036854775808,0,9223372036854775807]",
            [i64::MIN, 0, i64::MAX]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Fp32,
            "[1.5,0.10000000149011612,-3.3999999521443644e38]",
            { le_f32(&[1.5, 0.1, -3.4e38]) },
        ),
        (
            DataType::Fp64,
            "[0.1,1e300,-2.5]",
            [0.1f64, 1e300, -2.5]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            DataType::Bytes,
            r#"["안녕하세요","hello",""]"#,
            encode_bytes_elements(["안녕하세요", "hello", ""]).to_vec(),
        ),
    ];
    for (datatype, json_data, raw) in cases {
        let header = format!(
            r#"{{"inputs":[{{"name":"IN","shape":[3],"datatype":"{datatype}","data":{json_data}}}]}}"#
        );
        let request = decode_json(&header).unwrap();
        assert_eq!(request.inputs[0].data, raw, "{datatype} from JSON");
        assert_eq!(request.inputs[0].datatype, datatype);

        let header = format!(
            r#"{{"inputs":[{{"name":"IN","shape":[3],"datatype":"{datatype}","parameters":{{"binary_data_size":{}}}}}]}}"#,
            raw.len()
        );
        let request = decode_binary(&header, &[&raw]).unwrap();
        assert_eq!(request.inputs[0].data, raw, "{datatype} from binary");
        assert!(request.inputs[0].parameters.is_empty());
    }
    // FP16 and BF16 only come as binary data.
    for datatype in [DataType::Fp16, DataType::Bf16] {
        let raw = [0x00, 0x3c, 0x00, 0x40, 0x00, 0xc0];
        let header = format!(
            r#"{{"inputs":[{{"name":"IN","shape":[3],"datatype":"{datatype}","parameters":{{"binary_data_size":6}}}}]}}"#
        );
        let request = decode_binary(&header, &[&raw]).unwrap();
        assert_eq!(request.inputs[0].data, raw.to_vec());
    }
}

#[test]
fn binary_inputs_are_slices_of_the_body() {
    let a = le_f32(&[1.0, 2.0, 3.0]);
    let b = [7u8; 5];
    let (body, length) = binary_body(
        r#"{"inputs":[{"name":"A","shape":[1,3],"datatype":"FP32","parameters":{"binary_data_size":12}},
                      {"name":"J","shape":[2],"datatype":"BOOL","data":[true,false]},
                      {"name":"Z","shape":[0],"datatype":"INT32","parameters":{"binary_data_size":0}},
                      {"name":"B","shape":[5],"datatype":"UINT8","parameters":{"binary_data_size":5}}]}"#,
        &[&a, &b],
    );
    let body_range = body.as_ptr_range();
    let request = decode_infer_request("m", None, body.clone(), Some(length)).unwrap();
    let names: Vec<&str> = request.inputs.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["A", "J", "Z", "B"]);
    let a_data = &request.inputs[0].data;
    let b_data = &request.inputs[3].data;
    assert_eq!(a_data, &a);
    assert_eq!(b_data, &b[..]);
    // Zero copy: the tensors' bytes are the body's bytes.
    assert_eq!(a_data.as_ptr(), body[length..].as_ptr());
    assert!(body_range.contains(&a_data.as_ptr()));
    assert!(body_range.contains(&b_data.as_ptr()));
    assert_eq!(b_data.as_ptr(), body[length + 12..].as_ptr());
    assert_eq!(request.inputs[1].data, vec![1, 0]);
    assert!(request.inputs[2].data.is_empty());
}

#[test]
fn header_length_equal_to_body_is_a_json_request() {
    let body = r#"{"inputs":[{"name":"INPUT0","shape":[1,3],"datatype":"FP32","data":[1,2,3]}]}"#;
    let request = decode_infer_request("m", None, Bytes::from(body), Some(body.len())).unwrap();
    assert_eq!(request.inputs[0].data, le_f32(&[1.0, 2.0, 3.0]));
}

#[test]
fn raw_binary_requests_are_refused() {
    assert!(is_raw_binary_request(12, Some(0)));
    assert!(is_raw_binary_request(0, None));
    assert!(!is_raw_binary_request(12, None));
    assert!(!is_raw_binary_request(12, Some(12)));
    let err =
        decode_infer_request("m", None, Bytes::from_static(b"\0\0\x80\x3f"), Some(0)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported);
    assert!(err.message.contains("raw binary requests"), "{err}");
    let err = decode_infer_request("m", None, Bytes::new(), None).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported);
}

#[test]
fn request_parameters_are_typed_as_triton_requires() {
    let request = decode_json(
        r#"{"parameters":{"sequence_id":"abc","sequence_start":true,"sequence_end":false,
            "priority":1,"timeout":100,"binary_data_output":true,"big":18446744073709551615},
            "inputs":[]}"#,
    )
    .unwrap();
    assert_eq!(
        request.parameters["sequence_id"],
        ParameterValue::String("abc".into())
    );
    assert_eq!(request.parameters["priority"], ParameterValue::Int(1));
    assert_eq!(request.parameters["big"], ParameterValue::Uint(u64::MAX));
    assert_eq!(
        request.parameters["binary_data_output"],
        ParameterValue::Bool(true)
    );

    for (parameters, expected) in [
        (
            r#"{"binary_data_output":"true"}"#,
            "Unable to parse 'binary_data_output': attempt to access JSON non-boolean as boolean",
        ),
        (
            r#"{"sequence_start":1}"#,
            "Unable to parse 'sequence_start': attempt to access JSON non-boolean as boolean",
        ),
        (
            r#"{"priority":-1}"#,
            "Unable to parse 'priority': attempt to access JSON non-unsigned-integer as \
             unsigned-integer",
        ),
        (
            r#"{"timeout":1.5}"#,
            "Unable to parse 'timeout': attempt to access JSON non-unsigned-integer as \
             unsigned-integer",
        ),
        (
            r#"{"sequence_id":true}"#,
            "Unable to parse 'sequence_id': attempt to access JSON non-unsigned-integer as \
             unsigned-integer or string",
        ),
        (
            r#"{"foo":{"a":1}}"#,
            "parameter 'foo' has invalid type. It should be either 'int', 'bool', or 'string'.",
        ),
        (
            r#"{"triton_x":1}"#,
            "parameter keys starting with 'triton_' are reserved for Triton usage and should \
             not be specified.",
        ),
        (
            "5",
            "Unable to parse 'parameters' of the request: expected an object",
        ),
    ] {
        let err =
            decode_json(&format!(r#"{{"parameters":{parameters},"inputs":[]}}"#)).unwrap_err();
        assert_eq!(err.message, expected);
        // JSON type errors are internal in Triton (HTTP 500), the others
        // invalid arguments (400).
        assert_eq!(err.kind, triton_kind(expected), "{expected}");
    }
}

/// The error kind Triton 2.51 gives a message of the codec's (from its HTTP
/// status: 500 for JSON parse and JSON type errors, else 400).
fn triton_kind(message: &str) -> ErrorKind {
    if message.starts_with("Unable to parse") && !message.contains("out of range")
        || message.starts_with("Unable to set")
        || message.starts_with("failed to parse")
    {
        ErrorKind::Internal
    } else {
        ErrorKind::InvalidArg
    }
}

#[test]
fn tensor_and_output_parameters() {
    let request = decode_json(
        r#"{"inputs":[{"name":"I","shape":[1],"datatype":"INT8","data":[1],
                       "parameters":{"a":1,"nested":{"x":1},"list":[1]}}],
            "outputs":[{"name":"O","parameters":{"binary_data":false,"classification":0,"k":"v","n":null}}]}"#,
    )
    .unwrap();
    // Triton ignores other input and output parameters: values JSON cannot
    // hold as parameters are dropped, not refused.
    assert_eq!(request.inputs[0].parameters.len(), 1);
    let output = &request.outputs[0];
    assert_eq!(output.class_count, 0);
    assert_eq!(output.parameters.len(), 3);
    assert_eq!(output.parameters["k"], ParameterValue::String("v".into()));
    // class_count saturates.
    let request = decode_json(
        r#"{"inputs":[],"outputs":[{"name":"O","parameters":{"classification":99999999999}}]}"#,
    )
    .unwrap();
    assert_eq!(request.outputs[0].class_count, u32::MAX);
}

// ---------------------------------------------------------- request errors

#[test]
fn malformed_json_says_where() {
    let err = decode_json(r#"{"inputs": ["#).unwrap_err();
    // A 500 in Triton.
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(
        err.message
            .starts_with("failed to parse the request JSON buffer: "),
        "{err}"
    );
    assert!(err.message.contains("line 1 column 12"), "{err}");

    let err = decode_json("{\"inputs\":[],\n  \"id\": x}").unwrap_err();
    assert!(err.message.contains("line 2 column"), "{err}");

    // Binary data without the header length: the JSON parse fails, with a hint.
    let err = decode_infer_request(
        "m",
        None,
        Bytes::from_static(b"{\"inputs\":[]}\x00\x00\x80\x3f"),
        None,
    )
    .unwrap_err();
    assert!(err.message.contains("trailing characters"), "{err}");
    assert!(
        err.message.contains("Inference-Header-Content-Length"),
        "{err}"
    );

    // A header length that cuts the JSON.
    let (body, length) = binary_body(r#"{"inputs":[]}"#, &[b"abc"]);
    let err = decode_infer_request("m", None, body, Some(length - 2)).unwrap_err();
    assert!(
        err.message
            .starts_with("failed to parse the request JSON buffer: EOF"),
        "{err}"
    );
}

#[test]
fn structure_errors_name_the_member() {
    for (body, expected) in [
        (
            "{}",
            "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
        ),
        (
            r#"{"id":5,"inputs":[]}"#,
            "Unable to parse 'id': attempt to access JSON non-string as string",
        ),
        (
            r#"{"inputs":[],"outputs":{}}"#,
            "Unable to parse 'outputs': attempt to access JSON non-array as array",
        ),
        (
            r#"{"inputs":[],"outputs":[5]}"#,
            "Unable to parse 'outputs': output 0 is not a JSON object",
        ),
        (
            r#"{"inputs":[],"outputs":[{"parameters":{}}]}"#,
            "Unable to parse 'name' of output 0: attempt to access non-existing object member \
             'name'",
        ),
        (
            r#"{"inputs":[],"outputs":[{"name":"O","parameters":{"binary_data":1}}]}"#,
            "Unable to parse 'binary_data' of output 'O': attempt to access JSON non-boolean as \
             boolean",
        ),
        (
            r#"{"inputs":[],"outputs":[{"name":"O","parameters":{"classification":-1}}]}"#,
            "Unable to set 'classification' of output 'O': attempt to access JSON \
             non-unsigned-integer as unsigned-integer",
        ),
        (
            r#"{"inputs":[],"outputs":[{"name":"O","parameters":[]}]}"#,
            "Unable to parse 'parameters' of output 'O': expected an object",
        ),
    ] {
        let err = decode_json(body).unwrap_err();
        assert_eq!(err.message, expected, "{body}");
        assert_eq!(err.kind, ErrorKind::Internal, "{body}");
    }
    for (body, fragment) in [
        (
            "[]",
            "expected an inference request: a JSON object with an 'inputs' member",
        ),
        (
            r#"{"inputs":{"name":"I"}}"#,
            "expected 'inputs' to be an array",
        ),
        (r#"{"inputs":null}"#, "expected 'inputs' to be an array"),
        (
            r#"{"inputs":[5]}"#,
            "expected each input to be a JSON object",
        ),
    ] {
        let err = decode_json(body).unwrap_err();
        assert!(
            err.message
                .starts_with("Unable to parse the request JSON: "),
            "{err}"
        );
        assert!(err.message.contains(fragment), "{err}");
        assert!(err.message.contains("at line 1 column"), "{err}");
        assert_eq!(err.kind, ErrorKind::Internal);
    }
}

#[test]
fn input_errors_name_the_input() {
    let input = |members: &str| format!(r#"{{"inputs":[{{"name":"X",{members}}}]}}"#);
    for (members, expected) in [
        (
            r#""datatype":"FP32","data":[1]"#,
            "Unable to parse 'shape' of input 'X': attempt to access non-existing object member \
             'shape'",
        ),
        (
            r#""shape":[1],"data":[1]"#,
            "Unable to parse 'datatype' of input 'X': attempt to access non-existing object \
             member 'datatype'",
        ),
        (
            r#""shape":[1],"datatype":5,"data":[1]"#,
            "Unable to parse 'datatype' of input 'X': attempt to access JSON non-string as string",
        ),
        (
            r#""shape":[1],"datatype":"FLOAT","data":[1]"#,
            "invalid datatype for input X",
        ),
        (
            r#""shape":[1],"datatype":"fp32","data":[1]"#,
            "invalid datatype for input X",
        ),
        (
            r#""shape":[1,-1],"datatype":"FP32","data":[1]"#,
            "Unable to parse 'shape' of input 'X': expected an array of non-negative integers, \
             got [1,-1]",
        ),
        (
            r#""shape":[1,"a"],"datatype":"FP32","data":[1]"#,
            "Unable to parse 'shape' of input 'X': expected an array of non-negative integers, \
             got [1,\"a\"]",
        ),
        (
            r#""shape":[1],"datatype":"FP32""#,
            "Input 'X' must set only one of the following fields: 'data', 'binary_data_size' in \
             'parameters', 'shared_memory_region' in 'parameters'. But no field is set",
        ),
        (
            r#""shape":[1],"datatype":"FP32","data":[1],"parameters":{"binary_data_size":4}"#,
            "Input 'X' must set only one of the following fields: 'data', 'binary_data_size' in \
             'parameters', 'shared_memory_region' in 'parameters'. But set 'data' \
             'binary_data_size'",
        ),
        (
            r#""shape":[1],"datatype":"FP32","parameters":{"binary_data_size":-1}"#,
            "Unable to parse 'binary_data_size' of input 'X': attempt to access JSON \
             non-unsigned-integer as unsigned-integer",
        ),
        (
            r#""shape":[1],"datatype":"FP32","parameters":{"binary_data_size":"12"}"#,
            "Unable to parse 'binary_data_size' of input 'X': attempt to access JSON \
             non-unsigned-integer as unsigned-integer",
        ),
        (
            r#""shape":[1],"datatype":"FP32","parameters":5,"data":[1]"#,
            "Unable to parse 'parameters' of input 'X': expected an object",
        ),
        (
            r#""shape":[1,3],"datatype":"FP32","data":[1,2]"#,
            "Unable to parse 'data' of input 'X': Shape does not match true shape of 'data' \
             field: shape [1,3] has 3 elements, 'data' has 2",
        ),
        (
            r#""shape":[2],"datatype":"BYTES","data":["a","b","c"]"#,
            "unexpected number of string elements 3 for inference input 'X' for model 'm', \
             expecting 2",
        ),
        (
            r#""shape":[1],"datatype":"UINT8","data":[300]"#,
            "Unable to parse 'data' of input 'X': value 300 at element 0 is out of range for \
             UINT8",
        ),
        (
            r#""shape":[2],"datatype":"BOOL","data":[true,0]"#,
            "Unable to parse 'data' of input 'X': BOOL elements must be true or false, got 0 at \
             element 1",
        ),
        (
            r#""shape":[1],"datatype":"FP32","data":5"#,
            "Unable to parse 'data' of input 'X': expected an array of numbers",
        ),
        (
            r#""shape":[1],"datatype":"FP32","data":null"#,
            "Unable to parse 'data' of input 'X': expected an array of numbers",
        ),
        (
            r#""shape":[2],"datatype":"FP16","data":[1.0,2.0]"#,
            "receiving FP16 data via JSON is not supported. Please use the binary data format \
             for input X",
        ),
        (
            r#""shape":[2],"datatype":"BF16","data":[1.0,2.0]"#,
            "receiving BF16 data via JSON is not supported. Please use the binary data format \
             for input X",
        ),
        (
            r#""shape":[4294967296,4294967296,4294967296],"datatype":"INT8","data":[]"#,
            "invalid shape for input 'X': shape [4294967296,4294967296,4294967296] causes total \
             element count to exceed maximum size of 9223372036854775807",
        ),
    ] {
        let err = decode_json(&input(members)).unwrap_err();
        assert_eq!(err.message, expected, "{members}");
        assert_eq!(err.kind, triton_kind(expected), "{expected}");
    }
    assert_eq!(
        message(decode_json(
            r#"{"inputs":[{"shape":[1],"datatype":"FP32","data":[1]}]}"#
        )),
        "Unable to parse 'name' of input 0: attempt to access non-existing object member 'name'"
    );
    assert_eq!(
        message(decode_json(
            r#"{"inputs":[{"name":1,"shape":[1],"datatype":"FP32","data":[1]}]}"#
        )),
        "Unable to parse 'name' of input 0: attempt to access JSON non-string as string"
    );
}

#[test]
fn nan_and_infinity_literals_are_accepted_as_triton_does() {
    // RapidJSON (kParseNanAndInfFlag) takes them; Python's json.dumps writes
    // them for float('nan') and float('inf').
    let request = decode_json(
        r#"{"id":"NaN","parameters":{"p":NaN,"s":"Infinity"},
            "inputs":[{"name":"F","shape":[3],"datatype":"FP32","data":[NaN,Infinity,-Infinity]},
                      {"name":"D","shape":[1,2],"datatype":"FP64","data":[[-Infinity, 1.5]]},
                      {"name":"S","shape":[1],"datatype":"BYTES","data":["NaN"]}]}"#,
    )
    .unwrap();
    assert_eq!(request.id, "NaN");
    assert!(matches!(request.parameters["p"], ParameterValue::Double(d) if d.is_nan()));
    assert_eq!(
        request.parameters["s"],
        ParameterValue::String("Infinity".into())
    );
    let f: Vec<f32> = request.inputs[0]
        .data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(f[0].is_nan());
    assert_eq!(f[1..], [f32::INFINITY, f32::NEG_INFINITY]);
    let d: Vec<u8> = [f64::NEG_INFINITY, 1.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(request.inputs[1].data, d);
    assert_eq!(request.inputs[2].data, encode_bytes_elements(["NaN"]));

    // Where a number is not allowed, they are refused as numbers.
    let err =
        decode_json(r#"{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[NaN]}]}"#)
            .unwrap_err();
    assert_eq!(
        err.message,
        "Unable to parse 'data' of input 'I': INT32 elements must be integers, got NaN at \
         element 0"
    );
    let err = decode_json(
        r#"{"inputs":[{"name":"S","shape":[1],"datatype":"BYTES","data":[Infinity]}]}"#,
    )
    .unwrap_err();
    assert!(err.message.contains("got Infinity at element 0"), "{err}");
    assert_eq!(
        message(decode_json(r#"{"id":NaN,"inputs":[]}"#)),
        "Unable to parse 'id': attempt to access JSON non-string as string"
    );
    assert!(
        message(decode_json(
            r#"{"inputs":[{"name":NaN,"shape":[1],"datatype":"FP32","data":[1]}]}"#
        ))
        .contains("'name' of input 0")
    );
    // Other syntax errors are reported as such.
    let err = decode_json(r#"{"inputs":[{"name":"F","shape":[1],"datatype":"FP32","data":[NaN}]}"#)
        .unwrap_err();
    assert!(
        err.message
            .starts_with("failed to parse the request JSON buffer:"),
        "{err}"
    );
}

#[test]
fn empty_tensors_ignore_their_json_data_as_triton_does() {
    let request = decode_json(
        r#"{"inputs":[{"name":"I","shape":[0],"datatype":"INT32","data":[1,2]},
                      {"name":"J","shape":[1,0],"datatype":"FP32","data":[]}]}"#,
    )
    .unwrap();
    assert!(request.inputs[0].data.is_empty());
    assert!(request.inputs[1].data.is_empty());
    assert_eq!(request.inputs[1].shape, vec![1, 0]);
}

#[test]
fn member_order_does_not_matter() {
    // `data` after name, shape and datatype is parsed in the same pass as
    // the header; before them it is kept raw and parsed afterwards. Both
    // give the same tensors and the same errors.
    let cases = [
        ("FP32", "[2,2]", "[[1,2],[3.5,-4]]"),
        ("BYTES", "[2]", r#"["a","\u00e9"]"#),
        ("BOOL", "[1]", "[true]"),
        ("INT8", "[0]", "[1,2]"),
        ("FP32", "[3]", "[NaN,Infinity,-Infinity]"),
        // errors
        ("INT32", "[2]", "[1,1.5]"),
        ("UINT8", "[1]", "[256]"),
        ("FP64", "[3]", "[1,2]"),
        ("BYTES", "[3]", r#"["a"]"#),
        ("BYTES", "[1]", "[1]"),
        ("FP32", "[1]", "{\"a\":[1]}"),
        ("FP32", "[1]", "null"),
        ("FP16", "[1]", "[1]"),
        ("FP32", "[1,-1]", "[1]"),
        ("FLOAT", "[1]", "[1]"),
    ];
    for (datatype, shape, data) in cases {
        let members = [
            r#""name":"X""#.to_string(),
            format!(r#""shape":{shape}"#),
            format!(r#""datatype":"{datatype}""#),
            format!(r#""data":{data}"#),
        ];
        let mut results = Vec::new();
        for order in [
            [0, 1, 2, 3],
            [3, 0, 1, 2],
            [0, 3, 1, 2],
            [1, 2, 3, 0],
            [2, 1, 0, 3],
        ] {
            let input: Vec<&str> = order.iter().map(|&i| members[i].as_str()).collect();
            let body = format!(
                r#"{{"inputs":[{{{}}},{{"name":"Y","shape":[1],"datatype":"INT8","data":[7]}}]}}"#,
                input.join(",")
            );
            results.push(
                decode_json(&body)
                    .map(|r| r.inputs.iter().map(|t| t.data.clone()).collect::<Vec<_>>()),
            );
        }
        for result in &results[1..] {
            // NaN != NaN: compare the bytes.
            assert_eq!(
                format!("{result:?}"),
                format!("{:?}", results[0]),
                "{datatype} {shape} {data}"
            );
        }
    }
}

#[test]
fn data_errors_do_not_hide_later_syntax_errors() {
    // A refused element does not stop the parse: the JSON after it is still
    // checked, and a syntax error there is reported as such.
    let err = decode_json(
        r#"{"inputs":[{"name":"X","shape":[2],"datatype":"INT8","data":[300,1]}],"outputs":[}"#,
    )
    .unwrap_err();
    assert!(
        err.message
            .starts_with("failed to parse the request JSON buffer:"),
        "{err}"
    );
    // And elements after a refused one are not looked at.
    let err = decode_json(
        r#"{"inputs":[{"name":"X","shape":[3],"datatype":"INT8","data":[1,"a",300]}]}"#,
    )
    .unwrap_err();
    assert!(err.message.contains("got a string at element 1"), "{err}");
}

#[test]
fn shared_memory_tensors_keep_their_parameters_for_the_core() {
    let request = decode_json(
        r#"{"inputs":[{"name":"X","shape":[1],"datatype":"FP32",
            "parameters":{"shared_memory_region":"r0","shared_memory_byte_size":4,
            "shared_memory_offset":8,"other":"kept"}}],
            "outputs":[{"name":"O","parameters":{"shared_memory_region":"r1",
            "shared_memory_byte_size":16,"binary_data":false}}]}"#,
    )
    .unwrap();
    let input = &request.inputs[0];
    assert!(input.data.is_empty());
    let uint = ParameterValue::Uint;
    let string = |s: &str| ParameterValue::String(s.into());
    let expected: Parameters = [
        ("other".to_string(), string("kept")),
        ("shared_memory_byte_size".into(), uint(4)),
        ("shared_memory_offset".into(), uint(8)),
        ("shared_memory_region".into(), string("r0")),
    ]
    .into();
    assert_eq!(input.parameters, expected);
    let output = &request.outputs[0].parameters;
    assert_eq!(output.get("shared_memory_region"), Some(&string("r1")));
    assert_eq!(output.get("shared_memory_byte_size"), Some(&uint(16)));
}

#[test]
fn shared_memory_parameter_errors_are_tritons() {
    let input = |parameters: &str| {
        message(decode_json(&format!(
            r#"{{"inputs":[{{"name":"X","shape":[1],"datatype":"FP32","parameters":{parameters}}}]}}"#
        )))
    };
    assert!(
        input(r#"{"shared_memory_region":"r","shared_memory_byte_size":"4"}"#).starts_with(
            "Unable to parse 'shared_memory_byte_size' of input 'X': attempt to access JSON \
             non-unsigned-integer as unsigned-integer"
        )
    );
    assert!(
        input(r#"{"shared_memory_region":"r","shared_memory_offset":-1}"#)
            .starts_with("Unable to parse 'shared_memory_offset' of input 'X'")
    );
    let err = decode_json(
        r#"{"inputs":[],"outputs":[{"name":"O","parameters":{"shared_memory_region":"r",
            "binary_data":true}}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArg);
    assert_eq!(
        err.message,
        "Output can't set both 'shared_memory_region' and 'binary_data'"
    );
}

#[test]
fn shared_memory_outputs_are_sent_without_data() {
    let request = request_with(r#"{"inputs":[],"parameters":{"binary_data_output":true}}"#);
    let mut outputs = multi_io_outputs();
    outputs[0].data = Bytes::new();
    outputs[0].parameters.insert(
        "shared_memory_region".into(),
        ParameterValue::String("out".into()),
    );
    let encoded = encode_infer_response(&response(outputs), &request).unwrap();
    // As Triton 2.51 answers: no data and no parameters.
    assert!(
        json_text(&encoded).starts_with(
            r#"{"model_name":"multi_io","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3]},"#
        ),
        "{}",
        json_text(&encoded)
    );
    assert_eq!(encoded.binary.len(), 1);
}

#[test]
fn binary_section_errors() {
    let f32s = le_f32(&[1.0, 2.0, 3.0]);
    let header = |size: usize| {
        format!(
            r#"{{"inputs":[{{"name":"INPUT0","shape":[1,3],"datatype":"FP32","parameters":{{"binary_data_size":{size}}}}}]}}"#
        )
    };
    // Beyond the body: Triton's text, naming the input.
    let (body, length) = binary_body(&header(16), &[&f32s]);
    let err = decode_infer_request("identity_fp32", None, body, Some(length)).unwrap_err();
    assert_eq!(
        err.message,
        "unexpected size for input 'INPUT0', expecting 4 additional bytes for model \
         'identity_fp32'"
    );
    // Unused bytes after the last binary input.
    let (body, length) = binary_body(&header(8), &[&f32s]);
    let err = decode_infer_request("identity_fp32", None, body, Some(length)).unwrap_err();
    assert_eq!(
        err.message,
        "unexpected additional input data for model 'identity_fp32': 4 bytes after the last \
         input's binary data"
    );
    // Binary data after a JSON-only request.
    let (body, length) = binary_body(
        r#"{"inputs":[{"name":"I","shape":[1],"datatype":"INT8","data":[1]}]}"#,
        &[b"xx"],
    );
    let err = decode_infer_request("m", None, body, Some(length)).unwrap_err();
    assert!(
        err.message
            .starts_with("unexpected additional input data for model 'm'"),
        "{err}"
    );
    // Header length beyond the body: Triton's text.
    let (body, length) = binary_body(&header(12), &[&f32s]);
    let err = decode_infer_request("m", None, body.clone(), Some(body.len() + 10)).unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "inference header size should be in range (0, {}), got: {}",
            body.len(),
            body.len() + 10
        )
    );
    assert_eq!(length + 12, body.len());
    // binary_data_size without the header length: no binary section at all.
    let err =
        decode_infer_request("identity_fp32", None, Bytes::from(header(12)), None).unwrap_err();
    assert!(
        err.message.starts_with(
            "unexpected size for input 'INPUT0', expecting 12 additional bytes for model \
             'identity_fp32'"
        ),
        "{err}"
    );
    assert!(
        err.message.contains("Inference-Header-Content-Length"),
        "{err}"
    );
}

#[test]
fn binary_shapes_and_bytes_layout_are_left_to_the_core() {
    // 12 bytes for a [1,2] FP32 input, and a BYTES payload whose length
    // prefix is wrong: the core checks these, with the model's name.
    let request = decode_binary(
        r#"{"inputs":[{"name":"A","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":12}},
                      {"name":"B","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]}"#,
        &[&[0; 12], &[100, 0, 0, 0, b'a', b'b', b'c']],
    )
    .unwrap();
    assert_eq!(request.inputs[0].data.len(), 12);
    assert_eq!(request.inputs[1].data.len(), 7);
}

// --------------------------------------------------------------- responses

fn tensor(name: &str, datatype: DataType, shape: Vec<i64>, data: impl Into<Bytes>) -> Tensor {
    Tensor::new(name, datatype, shape, data.into())
}

fn response(outputs: Vec<Tensor>) -> InferResponse {
    InferResponse {
        model_name: "multi_io".into(),
        model_version: 1,
        id: String::new(),
        outputs,
        parameters: Parameters::new(),
    }
}

fn multi_io_outputs() -> Vec<Tensor> {
    vec![
        tensor(
            "OUTPUT0",
            DataType::Int64,
            vec![1, 3],
            [1i64, 2, 3]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
        tensor("OUTPUT1", DataType::Bool, vec![1, 3], vec![1u8, 0, 1]),
    ]
}

fn request_with(body: &str) -> InferRequest {
    decode_json(body).unwrap()
}

#[test]
fn encodes_json_outputs_as_triton_does() {
    let request = request_with(r#"{"inputs":[]}"#);
    let encoded = encode_infer_response(&response(multi_io_outputs()), &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"multi_io","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3],"data":[1,2,3]},{"name":"OUTPUT1","datatype":"BOOL","shape":[1,3],"data":[true,false,true]}]}"#
    );
    assert!(encoded.binary.is_empty());
    assert_eq!(encoded.header_length, None);
    assert_eq!(encoded.content_type(), "application/json");
    assert_eq!(encoded.body_len(), encoded.json.len());
}

#[test]
fn id_and_parameters_only_when_present_in_triton_order() {
    let request = request_with(r#"{"inputs":[]}"#);
    let mut r = response(vec![tensor(
        "OUTPUT0",
        DataType::Fp32,
        vec![1, 2],
        le_f32(&[1.0, 2.0]),
    )]);
    r.model_name = "identity_fp32".into();
    r.id = "my-request-1".into();
    let encoded = encode_infer_response(&r, &request).unwrap();
    // Captured from Triton 2.51.
    assert_eq!(
        json_text(&encoded),
        r#"{"id":"my-request-1","model_name":"identity_fp32","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,2],"data":[1.0,2.0]}]}"#
    );
    r.parameters
        .insert("sequence_end".into(), ParameterValue::Bool(true));
    r.parameters.insert("count".into(), ParameterValue::Int(-3));
    r.parameters
        .insert("note".into(), ParameterValue::String("x".into()));
    r.model_version = 12;
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"id":"my-request-1","model_name":"identity_fp32","model_version":"12","parameters":{"count":-3,"note":"x","sequence_end":true},"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,2],"data":[1.0,2.0]}]}"#
    );
    // No outputs at all.
    let encoded = encode_infer_response(&response(vec![]), &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"multi_io","model_version":"1","outputs":[]}"#
    );
}

#[test]
fn per_output_binary_data() {
    // Captured from Triton 2.51: OUTPUT1 named without binary_data is JSON.
    let request = request_with(
        r#"{"inputs":[],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1"}]}"#,
    );
    let outputs = multi_io_outputs();
    let output0_data = outputs[0].data.clone();
    let encoded = encode_infer_response(&response(outputs), &request).unwrap();
    let json = r#"{"model_name":"multi_io","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3],"parameters":{"binary_data_size":24}},{"name":"OUTPUT1","datatype":"BOOL","shape":[1,3],"data":[true,false,true]}]}"#;
    assert_eq!(json_text(&encoded), json);
    assert_eq!(encoded.header_length, Some(json.len()));
    assert_eq!(encoded.header_length, Some(222));
    assert_eq!(encoded.content_type(), "application/octet-stream");
    assert_eq!(encoded.binary.len(), 1);
    // Zero copy: the chunk is the output's buffer.
    assert_eq!(encoded.binary[0].as_ptr(), output0_data.as_ptr());
    let mut expected = json.as_bytes().to_vec();
    expected.extend_from_slice(&output0_data);
    assert_eq!(body(&encoded), expected);
    assert_eq!(encoded.body_len(), 246);
}

#[test]
fn request_level_binary_data_output() {
    let request = request_with(r#"{"parameters":{"binary_data_output":true},"inputs":[]}"#);
    let encoded = encode_infer_response(&response(multi_io_outputs()), &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"multi_io","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3],"parameters":{"binary_data_size":24}},{"name":"OUTPUT1","datatype":"BOOL","shape":[1,3],"parameters":{"binary_data_size":3}}]}"#
    );
    assert_eq!(encoded.header_length, Some(233));
    assert_eq!(
        body(&encoded)[233..],
        hex("010000000000000002000000000000000300000000000000010001")
    );

    // Named outputs follow their own binary_data (absent: JSON), others the
    // request's binary_data_output.
    let request = request_with(
        r#"{"parameters":{"binary_data_output":true},"inputs":[],
            "outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}},{"name":"OUTPUT1"}]}"#,
    );
    let encoded = encode_infer_response(&response(multi_io_outputs()), &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"multi_io","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3],"data":[1,2,3]},{"name":"OUTPUT1","datatype":"BOOL","shape":[1,3],"data":[true,false,true]}]}"#
    );
    assert_eq!(encoded.header_length, None);

    let request = request_with(
        r#"{"parameters":{"binary_data_output":true},"inputs":[],"outputs":[{"name":"OUTPUT0"}]}"#,
    );
    let encoded = encode_infer_response(&response(multi_io_outputs()), &request).unwrap();
    assert!(json_text(&encoded).contains(r#""shape":[1,3],"data":[1,2,3]"#));
    assert!(json_text(&encoded).contains(r#""parameters":{"binary_data_size":3}"#));

    let request = request_with(r#"{"parameters":{"binary_data_output":false},"inputs":[]}"#);
    let encoded = encode_infer_response(&response(multi_io_outputs()), &request).unwrap();
    assert!(encoded.binary.is_empty());
}

#[test]
fn empty_binary_outputs_have_no_chunk() {
    // Captured from Triton 2.51 (an empty [1,0] output as binary): the size
    // is announced, no binary data follows, the body is plain JSON.
    let request = request_with(r#"{"parameters":{"binary_data_output":true},"inputs":[]}"#);
    let mut r = response(vec![tensor(
        "OUTPUT0",
        DataType::Fp32,
        vec![1, 0],
        Bytes::new(),
    )]);
    r.model_name = "identity_fp32".into();
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"identity_fp32","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,0],"parameters":{"binary_data_size":0}}]}"#
    );
    assert!(encoded.binary.is_empty());
    assert_eq!(encoded.header_length, None);
    assert_eq!(encoded.content_type(), "application/json");
}

#[test]
fn bytes_outputs() {
    let request = request_with(r#"{"inputs":[]}"#);
    let data = encode_bytes_elements(["한국어 텍스트", "second"]);
    let mut r = response(vec![tensor("OUTPUT0", DataType::Bytes, vec![2, 1], data)]);
    r.model_name = "identity_bytes".into();
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"identity_bytes","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"BYTES","shape":[2,1],"data":["한국어 텍스트","second"]}]}"#
    );

    // Escapes, as Triton writes them.
    let data = encode_bytes_elements(["a\"b\\c\né\0z"]);
    r.outputs = vec![tensor("OUTPUT0", DataType::Bytes, vec![1, 1], data)];
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert!(
        json_text(&encoded).ends_with(r#""data":["a\"b\\c\né\u0000z"]}]}"#),
        "{}",
        json_text(&encoded)
    );

    // Not UTF-8: Triton 2.51 copies the bytes into the JSON string as they
    // are (captured: 129 bytes ending in `"data":["\xff\xfe"]}]}`).
    let data = encode_bytes_elements([b"\xff\xfe".as_slice()]);
    r.outputs = vec![tensor("OUTPUT0", DataType::Bytes, vec![1, 1], data)];
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        encoded.json,
        hex(
            "7b226d6f64656c5f6e616d65223a226964656e746974795f6279746573222c226d6f64656c5f76657273696f6e223a2231222c226f757470757473223a5b7b226e616d65223a224f555450555430222c226461746174797065223a224259544553222c227368617065223a5b312c315d2c2264617461223a5b22fffe225d7d5d7d"
        )
    );

    // As binary: the length-prefixed layout, as is (captured).
    let request = request_with(r#"{"parameters":{"binary_data_output":true},"inputs":[]}"#);
    let data = encode_bytes_elements(["안녕", "hi"]);
    r.outputs = vec![tensor("OUTPUT0", DataType::Bytes, vec![2, 1], data)];
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"identity_bytes","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"BYTES","shape":[2,1],"parameters":{"binary_data_size":16}}]}"#
    );
    assert_eq!(
        encoded.binary,
        vec![Bytes::from(hex("06000000ec9588eb8595020000006869"))]
    );
    assert_eq!(encoded.header_length, Some(152));
}

#[test]
fn classification_outputs_are_encoded_like_others() {
    // The core has already turned the output into BYTES "score:index:label".
    let request = request_with(
        r#"{"inputs":[],"outputs":[{"name":"OUTPUT0","parameters":{"classification":2,"binary_data":true}}]}"#,
    );
    let data = encode_bytes_elements(["0.700000:1:dog", "0.150000:3:fish"]);
    let mut r = response(vec![tensor("OUTPUT0", DataType::Bytes, vec![1, 2], data)]);
    r.model_name = "identity_fp32".into();
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"identity_fp32","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"BYTES","shape":[1,2],"parameters":{"binary_data_size":37}}]}"#
    );
    assert_eq!(encoded.header_length, Some(151));
}

#[test]
fn floats_as_triton_writes_them() {
    let request = request_with(r#"{"inputs":[]}"#);
    let mut r = response(vec![tensor(
        "OUTPUT0",
        DataType::Fp32,
        vec![1, 4],
        le_f32(&[0.1, 0.7, 0.05, 0.15]),
    )]);
    r.model_name = "identity_fp32".into();
    let encoded = encode_infer_response(&r, &request).unwrap();
    // Captured from Triton 2.51.
    assert_eq!(
        json_text(&encoded),
        r#"{"model_name":"identity_fp32","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,4],"data":[0.10000000149011612,0.699999988079071,0.05000000074505806,0.15000000596046449]}]}"#
    );
    r.outputs = vec![tensor(
        "OUT_FP32",
        DataType::Fp32,
        vec![3],
        le_f32(&[f32::INFINITY, f32::MIN_POSITIVE * f32::EPSILON, f32::MAX]),
    )];
    let encoded = encode_infer_response(&r, &request).unwrap();
    assert!(
        json_text(&encoded)
            .ends_with(r#""data":[Infinity,1.401298464324817e-45,3.4028234663852887e38]}]}"#),
        "{}",
        json_text(&encoded)
    );
}

#[test]
fn fp16_and_bf16_outputs_need_binary() {
    let json_request = request_with(r#"{"inputs":[]}"#);
    let binary_request = request_with(
        r#"{"inputs":[],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}"#,
    );
    for datatype in [DataType::Fp16, DataType::Bf16] {
        let mut r = response(vec![tensor(
            "OUTPUT0",
            datatype,
            vec![3],
            vec![0x00, 0x3c, 0x00, 0x38, 0x00, 0xc0],
        )]);
        r.model_name = "identity_fp16".into();
        let err = encode_infer_response(&r, &json_request).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArg);
        assert_eq!(
            err.message,
            format!(
                "sending {datatype} data via JSON is not supported. Please use the binary data \
                 format for output OUTPUT0"
            )
        );
        let encoded = encode_infer_response(&r, &binary_request).unwrap();
        assert_eq!(
            json_text(&encoded),
            format!(
                r#"{{"model_name":"identity_fp16","model_version":"1","outputs":[{{"name":"OUTPUT0","datatype":"{datatype}","shape":[3],"parameters":{{"binary_data_size":6}}}}]}}"#
            )
        );
        assert_eq!(encoded.binary[0], vec![0x00, 0x3c, 0x00, 0x38, 0x00, 0xc0]);
    }
}

#[test]
fn outputs_whose_data_does_not_fit_their_shape() {
    let request = request_with(r#"{"inputs":[]}"#);
    for output in [
        tensor("O", DataType::Int32, vec![2], vec![0u8; 4]),
        tensor("O", DataType::Int32, vec![-1], vec![0u8; 4]),
        tensor("O", DataType::Bytes, vec![2], encode_bytes_elements(["a"])),
    ] {
        let err = encode_infer_response(&response(vec![output]), &request).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Internal);
        assert_eq!(
            err.message,
            "output tensor shape does not match size of output for 'O'"
        );
    }
}

#[test]
fn every_datatype_round_trips_through_request_and_response() {
    let datatypes = [
        (DataType::Bool, "[true,false,true]"),
        (DataType::Uint8, "[0,1,255]"),
        (DataType::Uint16, "[0,1,65535]"),
        (DataType::Uint32, "[0,1,4294967295]"),
        (DataType::Uint64, "[0,1,18446744073709551615]"),
        (DataType::Int8, "[-128,0,127]"),
        (DataType::Int16, "[-32768,0,32767]"),
        (DataType::Int32, "[-2147483648,0,2147483647]"),
        (
            DataType::Int64,
            "[-9223372036854775808,0,9223372036854775807]",
        ),
        (
            DataType::Fp32,
            "[1.5,0.10000000149011612,-3.3999999521443644e38]",
        ),
        (DataType::Fp64, "[0.1,1e300,-2.5]"),
        (DataType::Bytes, r#"["안녕하세요","hello",""]"#),
    ];
    for (datatype, data) in datatypes {
        // JSON in, JSON out: the same text (an identity model).
        let request = decode_json(&format!(
            r#"{{"inputs":[{{"name":"IN","shape":[3],"datatype":"{datatype}","data":{data}}}]}}"#
        ))
        .unwrap();
        let mut output = request.inputs[0].clone();
        output.name = "OUT".into();
        let encoded = encode_infer_response(&response(vec![output.clone()]), &request).unwrap();
        assert_eq!(
            json_text(&encoded),
            format!(
                r#"{{"model_name":"multi_io","model_version":"1","outputs":[{{"name":"OUT","datatype":"{datatype}","shape":[3],"data":{data}}}]}}"#
            )
        );

        // Binary in, binary out: the same bytes, never copied.
        let raw = output.data.clone();
        let header = format!(
            r#"{{"parameters":{{"binary_data_output":true}},"inputs":[{{"name":"IN","shape":[3],"datatype":"{datatype}","parameters":{{"binary_data_size":{}}}}}]}}"#,
            raw.len()
        );
        let (body, length) = binary_body(&header, &[&raw]);
        let request = decode_infer_request("multi_io", None, body.clone(), Some(length)).unwrap();
        assert_eq!(request.inputs[0].data.as_ptr(), body[length..].as_ptr());
        let mut output = request.inputs[0].clone();
        output.name = "OUT".into();
        let encoded = encode_infer_response(&response(vec![output]), &request).unwrap();
        assert_eq!(encoded.binary.len(), 1);
        assert_eq!(encoded.binary[0], raw);
        assert_eq!(encoded.binary[0].as_ptr(), body[length..].as_ptr());
        assert_eq!(encoded.header_length, Some(encoded.json.len()));
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
