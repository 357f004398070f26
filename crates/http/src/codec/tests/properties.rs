//! Properties of the request decoders on arbitrary input: any body is decoded
//! or refused (never a panic), tensors written as binary or JSON data decode
//! to themselves, and JSON data that does not fill the shape is refused.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::codec::decode_raw_request;

/// Text made of the members, values and punctuation of request headers, so
/// that arbitrary bodies reach past the first syntax error.
fn header_soup() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"inputs\"",
            "\"outputs\"",
            "\"name\"",
            "\"shape\"",
            "\"datatype\"",
            "\"data\"",
            "\"parameters\"",
            "\"id\"",
            "\"binary_data_size\"",
            "\"binary_data\"",
            "\"classification\"",
            "\"shared_memory_region\"",
            "\"shared_memory_byte_size\"",
            "\"INT32\"",
            "\"BYTES\"",
            "\"FP16\"",
            "\"BOOL\"",
            "true",
            "null",
            "NaN",
            "-Infinity",
        ])
        .prop_map(str::to_string),
        "-?[0-9]{1,20}(\\.[0-9]+)?",
        "\"[a-zA-Z0-9_]{0,6}\"",
    ];
    prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat().into_bytes())
}

/// A body and its `Inference-Header-Content-Length` (any, or none).
fn body_and_length() -> impl Strategy<Value = (Vec<u8>, Option<usize>)> {
    let body = prop_oneof![prop::collection::vec(any::<u8>(), 0..128), header_soup()];
    (body, prop::option::of(0usize..160))
}

/// Datatypes with a fixed element size.
fn fixed_size_datatype() -> impl Strategy<Value = DataType> {
    prop::sample::select(DataType::all().to_vec())
        .prop_filter("fixed size", |t| t.element_size().is_some())
}

/// A tensor of a fixed-size datatype with random data that fills its shape.
fn binary_tensor() -> impl Strategy<Value = (DataType, Vec<i64>, Vec<u8>)> {
    (fixed_size_datatype(), prop::collection::vec(0i64..4, 0..3)).prop_flat_map(
        |(datatype, shape)| {
            let size = element_count(&shape) * datatype.element_size().unwrap();
            (
                Just(datatype),
                Just(shape),
                prop::collection::vec(any::<u8>(), size),
            )
        },
    )
}

fn element_count(shape: &[i64]) -> usize {
    oxiserve_types::element_count(shape).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_body_is_decoded_or_refused((body, length) in body_and_length()) {
        let body = Bytes::from(body);
        let raw = is_raw_binary_request(body.len(), length);
        let decoded = decode_infer_request("m", None, body, length);
        prop_assert!(!(raw && decoded.is_ok()));
    }

    #[test]
    fn binary_tensors_decode_to_themselves(
        tensors in prop::collection::vec(binary_tensor(), 1..4),
        texts in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..8), 0..4),
    ) {
        let mut inputs: Vec<Tensor> = tensors
            .into_iter()
            .enumerate()
            .map(|(i, (datatype, shape, data))| tensor(&format!("IN{i}"), datatype, shape, data))
            .collect();
        inputs.push(tensor("TEXT", DataType::Bytes, vec![texts.len() as i64], encode_bytes_elements(&texts)));
        let header = json!({ "inputs": inputs.iter().map(|t| json!({
            "name": t.name,
            "datatype": t.datatype.wire_name(),
            "shape": t.shape,
            "parameters": { "binary_data_size": t.data.len() },
        })).collect::<Vec<_>>() }).to_string();
        let chunks: Vec<&[u8]> = inputs.iter().map(|t| &t.data[..]).collect();
        let request = decode_binary(&header, &chunks).unwrap();
        prop_assert_eq!(request.inputs, inputs);
    }

    #[test]
    fn json_data_decodes_to_its_bytes(
        ints in prop::collection::vec(any::<i32>(), 0..16),
        flags in prop::collection::vec(any::<bool>(), 0..16),
        texts in prop::collection::vec(".{0,6}", 0..6),
    ) {
        let header = json!({ "inputs": [
            { "name": "I", "datatype": "INT32", "shape": [ints.len()], "data": ints },
            { "name": "B", "datatype": "BOOL", "shape": [1, flags.len()], "data": [flags] },
            { "name": "S", "datatype": "BYTES", "shape": [texts.len()], "data": texts },
        ] });
        let request = decode_json(&header.to_string()).unwrap();
        let le: Vec<u8> = ints.iter().flat_map(|v| v.to_le_bytes()).collect();
        prop_assert_eq!(&request.inputs[0].data[..], &le[..]);
        let bools: Vec<u8> = flags.iter().map(|&b| u8::from(b)).collect();
        prop_assert_eq!(&request.inputs[1].data[..], &bools[..]);
        prop_assert_eq!(&request.inputs[2].data, &encode_bytes_elements(&texts));
    }

    #[test]
    fn json_data_that_misses_the_shape_is_refused(
        values in prop::collection::vec(any::<i16>(), 0..12),
        shape in prop::collection::vec(0u64..6, 1..3),
        datatype in prop::sample::select(vec!["INT16", "INT64", "FP32", "BYTES"]),
    ) {
        let count: u64 = shape.iter().product();
        prop_assume!(count != values.len() as u64 && count > 0);
        let data: Vec<serde_json::Value> = values
            .iter()
            .map(|&v| if datatype == "BYTES" { json!(v.to_string()) } else { json!(v) })
            .collect();
        let header = json!({ "inputs": [
            { "name": "I", "datatype": datatype, "shape": shape, "data": data },
        ] });
        prop_assert!(decode_json(&header.to_string()).is_err());
    }

    #[test]
    fn any_raw_body_is_decoded_or_refused(
        data_type in -1i32..16,
        max_batch_size in -1i32..9,
        dims in prop::collection::vec(prop_oneof![-2i64..9, any::<i64>()], 0..4),
        body in prop::collection::vec(any::<u8>(), 0..32),
    ) {
        let config = oxiserve_config::ModelConfig {
            max_batch_size,
            input: vec![oxiserve_proto::inference::ModelInput {
                name: "IN".into(),
                data_type,
                dims,
                ..Default::default()
            }],
            ..Default::default()
        };
        if let Ok(request) = decode_raw_request(&config, None, Bytes::from(body)) {
            prop_assert_eq!(request.inputs.len(), 1);
        }
    }
}
