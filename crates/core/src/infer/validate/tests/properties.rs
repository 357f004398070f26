//! Properties of request validation on arbitrary shapes and data: a declared
//! shape whose element count does not match the data is refused, for
//! fixed-size datatypes and the BYTES layout alike, and a matching one passes.

use bytes::Bytes;
use oxiserve_proto::inference::ModelInput;
use oxiserve_types::encode_bytes_elements;
use proptest::prelude::*;

use crate::infer::validate::*;

/// A model `m` without batching whose one input `IN` has `datatype` and
/// two variable dims.
fn model(datatype: DataType) -> ModelConfig {
    ModelConfig {
        name: "m".into(),
        input: vec![ModelInput {
            name: "IN".into(),
            data_type: datatype.config_number(),
            dims: vec![-1, -1],
            ..ModelInput::default()
        }],
        ..ModelConfig::default()
    }
}

fn request(datatype: DataType, shape: Vec<i64>, data: impl Into<Bytes>) -> InferRequest {
    InferRequest {
        model_name: "m".into(),
        inputs: vec![Tensor::new("IN", datatype, shape, data.into())],
        ..InferRequest::default()
    }
}

fn fixed_size_datatype() -> impl Strategy<Value = DataType> {
    prop::sample::select(DataType::all().to_vec())
        .prop_filter("fixed size", |t| t.element_size().is_some())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_size_data_must_fill_the_shape(
        datatype in fixed_size_datatype(),
        shape in prop::collection::vec(prop_oneof![0i64..6, any::<i64>()], 2),
        len in 0usize..300,
    ) {
        let size = datatype.element_size().unwrap();
        let fits = element_count(&shape).is_some_and(|n| n.checked_mul(size) == Some(len));
        let result = validate(&model(datatype), request(datatype, shape, vec![0u8; len]));
        prop_assert_eq!(result.is_ok(), fits, "{:?}", result.err());
    }

    #[test]
    fn bytes_elements_must_match_the_shape(
        elements in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 0..8),
        shape in prop::collection::vec(0i64..9, 2),
    ) {
        let fits = element_count(&shape) == Some(elements.len());
        let data = encode_bytes_elements(&elements);
        let result = validate(&model(DataType::Bytes), request(DataType::Bytes, shape, data));
        prop_assert_eq!(result.is_ok(), fits, "{:?}", result.err());
    }

    #[test]
    fn any_bytes_data_is_checked_without_panic(
        data in prop::collection::vec(any::<u8>(), 0..48),
        count in prop_oneof![0i64..6, any::<i64>()],
    ) {
        let _ = validate(&model(DataType::Bytes), request(DataType::Bytes, vec![1, count], data));
    }
}
