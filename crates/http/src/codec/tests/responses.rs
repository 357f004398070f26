//! Encoding responses.

use super::*;

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
    for (datatype, data) in JSON_SAMPLES {
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
