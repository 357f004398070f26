//! Decoding requests.

use super::*;

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
fn raw_binary_requests_are_left_to_the_raw_decoder() {
    assert!(is_raw_binary_request(12, Some(0)));
    assert!(is_raw_binary_request(0, None));
    assert!(!is_raw_binary_request(12, None));
    assert!(!is_raw_binary_request(12, Some(12)));
    let err =
        decode_infer_request("m", None, Bytes::from_static(b"\0\0\x80\x3f"), Some(0)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArg);
    assert!(err.message.contains("decode_raw_request"), "{err}");
    let err = decode_infer_request("m", None, Bytes::new(), None).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArg);
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
