//! Errors in requests, worded as Triton words them.

use super::*;

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
            "Unable to parse 'data': Shape does not match true shape of 'data' field",
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
