//! Properties of `ModelInferRequest` conversion on arbitrary input: any
//! protobuf bytes are converted or refused (never a panic), and tensors sent
//! as raw or typed contents convert to their little-endian bytes.

use bytes::Bytes;
use oxiserve_proto::inference::{
    InferTensorContents, ModelInferRequest, model_infer_request::InferInputTensor,
};
use oxiserve_types::{DataType, encode_bytes_elements};
use proptest::prelude::*;
use prost::Message;

use super::request::decode;

fn input(name: &str, datatype: DataType, shape: Vec<i64>) -> InferInputTensor {
    InferInputTensor {
        name: name.into(),
        datatype: datatype.wire_name().into(),
        shape,
        ..InferInputTensor::default()
    }
}

/// A message with arbitrary inputs: any datatype name, shape and contents.
fn message() -> impl Strategy<Value = ModelInferRequest> {
    let contents = (
        prop::collection::vec(any::<i32>(), 0..4),
        prop::collection::vec(any::<u32>(), 0..4),
        prop::collection::vec(any::<f32>(), 0..4),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), 0..3),
    )
        .prop_map(
            |(int_contents, uint_contents, fp32_contents, bytes_contents)| InferTensorContents {
                int_contents,
                uint_contents,
                fp32_contents,
                bytes_contents,
                ..InferTensorContents::default()
            },
        );
    let datatype = prop_oneof![
        prop::sample::select(DataType::all().to_vec()).prop_map(|t| t.wire_name().to_string()),
        "[A-Z0-9]{0,5}",
    ];
    let tensor = (
        datatype,
        prop::collection::vec(any::<i64>(), 0..3),
        prop::option::of(contents),
    )
        .prop_map(|(datatype, shape, contents)| InferInputTensor {
            name: "IN".into(),
            datatype,
            shape,
            contents,
            ..InferInputTensor::default()
        });
    (
        "[0-9 +-]{0,4}",
        prop::collection::vec(tensor, 0..3),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..8), 0..3),
    )
        .prop_map(|(model_version, inputs, raw)| ModelInferRequest {
            model_name: "m".into(),
            model_version,
            inputs,
            raw_input_contents: raw.into_iter().map(Bytes::from).collect(),
            ..ModelInferRequest::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_protobuf_bytes_are_converted_or_refused(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        if let Ok(message) = ModelInferRequest::decode(Bytes::from(bytes)) {
            let _ = decode(message);
        }
    }

    #[test]
    fn any_message_is_converted_or_refused(message in message()) {
        let inputs = message.inputs.len();
        if let Ok(decoded) = decode(message) {
            prop_assert_eq!(decoded.request.inputs.len(), inputs);
        }
    }

    #[test]
    fn raw_contents_survive_the_wire(
        tensors in prop::collection::vec((prop::collection::vec(0i64..5, 0..3), prop::collection::vec(any::<u8>(), 0..16)), 1..4),
    ) {
        let message = ModelInferRequest {
            model_name: "m".into(),
            inputs: tensors.iter().enumerate().map(|(i, (shape, _))| input(&format!("IN{i}"), DataType::Uint8, shape.clone())).collect(),
            raw_input_contents: tensors.iter().map(|(_, data)| Bytes::from(data.clone())).collect(),
            ..ModelInferRequest::default()
        };
        let wire = ModelInferRequest::decode(Bytes::from(message.encode_to_vec())).unwrap();
        let request = decode(wire).unwrap().request;
        for (tensor, (shape, data)) in request.inputs.iter().zip(&tensors) {
            prop_assert_eq!(&tensor.shape, shape);
            prop_assert_eq!(&tensor.data[..], &data[..]);
        }
    }

    #[test]
    fn typed_contents_become_little_endian_bytes(
        ints in prop::collection::vec(any::<i32>(), 1..8),
        longs in prop::collection::vec(any::<i64>(), 1..8),
        floats in prop::collection::vec(any::<f64>(), 1..8),
        texts in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 1..4),
    ) {
        let typed = |name: &str, datatype: DataType, count: usize, contents: InferTensorContents| InferInputTensor {
            contents: Some(contents),
            ..input(name, datatype, vec![count as i64])
        };
        let message = ModelInferRequest {
            model_name: "m".into(),
            inputs: vec![
                typed("I16", DataType::Int16, ints.len(), InferTensorContents { int_contents: ints.clone(), ..Default::default() }),
                typed("I64", DataType::Int64, longs.len(), InferTensorContents { int64_contents: longs.clone(), ..Default::default() }),
                typed("F64", DataType::Fp64, floats.len(), InferTensorContents { fp64_contents: floats.clone(), ..Default::default() }),
                typed("S", DataType::Bytes, texts.len(), InferTensorContents { bytes_contents: texts.clone(), ..Default::default() }),
            ],
            ..ModelInferRequest::default()
        };
        let inputs = decode(message).unwrap().request.inputs;
        let narrowed: Vec<u8> = ints.iter().flat_map(|&v| (v as i16).to_le_bytes()).collect();
        prop_assert_eq!(&inputs[0].data[..], &narrowed[..]);
        let le: Vec<u8> = longs.iter().flat_map(|v| v.to_le_bytes()).collect();
        prop_assert_eq!(&inputs[1].data[..], &le[..]);
        let le: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
        prop_assert_eq!(&inputs[2].data[..], &le[..]);
        prop_assert_eq!(&inputs[3].data, &encode_bytes_elements(&texts));
    }
}
