//! Raw binary requests: a body with `Inference-Header-Content-Length: 0` (or
//! an empty body) is the whole of the model's single input, as Triton reads
//! it. The input's datatype and shape come from the model configuration: a
//! batching model gets a batch of 1, and one variable dimension takes what
//! the body's size gives. Like Triton, a shape with more than one variable
//! dimension cannot be deduced, and a BYTES body is one element, for an
//! input of shape [1] only. Every output comes back as binary data.

use bytes::Bytes;
use oxiserve_config::{BatchPlan, ModelConfig};
use oxiserve_types::{
    DataType, Error, InferRequest, ParameterValue, Parameters, Tensor, encode_bytes_elements,
};

/// The request a raw binary `body` makes for the model `config`.
pub fn decode_raw_request(
    config: &ModelConfig,
    model_version: Option<i64>,
    body: Bytes,
) -> Result<InferRequest, Error> {
    let [input] = config.input.as_slice() else {
        return Err(Error::invalid_arg(format!(
            "[request id: <id_unknown>] Raw request must only have 1 input (found 1) to be \
             deduced but got {} inputs in '{}' model configuration",
            config.input.len(),
            config.name
        )));
    };
    let datatype = DataType::from_config_number(input.data_type).ok_or_else(|| {
        Error::invalid_arg(format!("input '{}' has no valid datatype", input.name))
    })?;
    let variable = input.dims.iter().filter(|&&d| d < 0).count();
    if variable > 1 {
        return Err(Error::invalid_arg(format!(
            "[request id: <id_unknown>] The shape of the raw input '{}' can not be deduced \
             because there are more than one variable-sized dimension",
            input.name
        )));
    }
    // 0 (no size to divide by) when the fixed dims overflow: such a shape
    // fails validation whatever the variable dim is.
    let known = input
        .dims
        .iter()
        .filter(|&&d| d >= 0)
        .try_fold(1i64, |product, &d| product.checked_mul(d))
        .unwrap_or(0);
    let (data, elements) = match datatype.element_size() {
        None if variable > 0 || known != 1 => {
            return Err(Error::invalid_arg(format!(
                "[request id: <id_unknown>] For BYTE datatype raw input '{}', the model must \
                 have input shape [1]",
                input.name
            )));
        }
        None => (encode_bytes_elements([&body[..]]), 1),
        Some(size) => {
            let elements = body.len() / size;
            (body, elements)
        }
    };
    let mut shape: Vec<i64> = Vec::with_capacity(input.dims.len() + 1);
    if BatchPlan::of(config).is_batching() {
        shape.push(1);
    }
    shape.extend(input.dims.iter().map(|&d| match d {
        d if d >= 0 => d,
        _ if known > 0 => elements as i64 / known,
        _ => 1,
    }));
    let mut parameters = Parameters::new();
    parameters.insert("binary_data_output".into(), ParameterValue::Bool(true));
    Ok(InferRequest {
        model_name: config.name.clone(),
        model_version,
        inputs: vec![Tensor::new(input.name.clone(), datatype, shape, data)],
        parameters,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use oxiserve_config::ModelConfig;
    use oxiserve_proto::inference::ModelInput;

    use super::*;

    fn config(max_batch_size: i32, inputs: &[(&str, DataType, &[i64])]) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            max_batch_size,
            input: inputs
                .iter()
                .map(|(name, t, dims)| ModelInput {
                    name: name.to_string(),
                    data_type: t.config_number(),
                    dims: dims.to_vec(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_body_is_the_single_input() {
        let c = config(8, &[("INPUT0", DataType::Fp32, &[-1])]);
        let r = decode_raw_request(&c, None, Bytes::from(vec![0u8; 12])).unwrap();
        assert_eq!(r.inputs[0].name, "INPUT0");
        assert_eq!(r.inputs[0].shape, vec![1, 3]);
        assert_eq!(
            r.parameters["binary_data_output"],
            ParameterValue::Bool(true)
        );
        let c = config(0, &[("INPUT0", DataType::Int32, &[2, 3])]);
        let r = decode_raw_request(&c, Some(2), Bytes::from(vec![0u8; 12])).unwrap();
        assert_eq!(
            (r.inputs[0].shape.clone(), r.model_version),
            (vec![2, 3], Some(2))
        );
    }

    #[test]
    fn a_bytes_body_is_one_element() {
        let c = config(8, &[("TEXT", DataType::Bytes, &[1])]);
        let r = decode_raw_request(&c, None, Bytes::from_static(b"hi")).unwrap();
        assert_eq!(r.inputs[0].shape, vec![1, 1]);
        assert_eq!(r.inputs[0].data, encode_bytes_elements(["hi"]));
        // Triton's test of one element: the fixed dims' product is 1.
        let c = config(0, &[("TEXT", DataType::Bytes, &[1, 1])]);
        let r = decode_raw_request(&c, None, Bytes::from_static(b"hi")).unwrap();
        assert_eq!(r.inputs[0].shape, vec![1, 1]);
    }

    #[test]
    fn a_bytes_input_must_have_shape_1() {
        for dims in [&[2][..], &[-1], &[1, -1], &[0], &[i64::MAX, 2]] {
            for max_batch_size in [0, 8] {
                let c = config(max_batch_size, &[("INPUT0", DataType::Bytes, dims)]);
                let err = decode_raw_request(&c, None, Bytes::from_static(b"hi")).unwrap_err();
                assert_eq!(err.kind, oxiserve_types::ErrorKind::InvalidArg, "{dims:?}");
                assert_eq!(
                    err.message,
                    "[request id: <id_unknown>] For BYTE datatype raw input 'INPUT0', the model \
                     must have input shape [1]",
                    "{dims:?}"
                );
            }
        }
    }

    #[test]
    fn two_variable_dims_cannot_be_deduced() {
        // Checked before the datatype's rule and whatever the body's size.
        for (datatype, dims) in [
            (DataType::Fp32, &[-1, -1][..]),
            (DataType::Uint8, &[-1, 3, -1]),
            (DataType::Bytes, &[-1, -1]),
        ] {
            for body in [&b""[..], b"1234567"] {
                let c = config(4, &[("INPUT0", datatype, dims)]);
                let err = decode_raw_request(&c, None, Bytes::from(body)).unwrap_err();
                assert_eq!(err.kind, oxiserve_types::ErrorKind::InvalidArg);
                assert_eq!(
                    err.message,
                    "[request id: <id_unknown>] The shape of the raw input 'INPUT0' can not be \
                     deduced because there are more than one variable-sized dimension"
                );
            }
        }
        // The batch dimension is not one of the model's dims.
        let c = config(4, &[("INPUT0", DataType::Fp32, &[2, -1])]);
        let r = decode_raw_request(&c, None, Bytes::from(vec![0u8; 8])).unwrap();
        assert_eq!(r.inputs[0].shape, vec![1, 2, 1]);
    }

    /// Found by fuzzing (fuzz/fuzz_targets/http_raw_request.rs): fixed dims
    /// whose product overflows made the variable dim's computation panic.
    #[test]
    fn fixed_dims_that_overflow_leave_the_variable_dim_at_1() {
        let c = config(0, &[("INPUT0", DataType::Uint8, &[i64::MAX, 4, -1])]);
        let r = decode_raw_request(&c, None, Bytes::from_static(b"hello")).unwrap();
        assert_eq!(r.inputs[0].shape, vec![i64::MAX, 4, 1]);
    }

    #[test]
    fn several_inputs_cannot_be_deduced() {
        let c = config(
            0,
            &[("A", DataType::Int32, &[1]), ("B", DataType::Int32, &[1])],
        );
        let err = decode_raw_request(&c, None, Bytes::new()).unwrap_err();
        assert!(
            err.message.contains("Raw request must only have 1 input"),
            "{err}"
        );
        assert!(err.message.contains("got 2 inputs in 'm'"), "{err}");
    }
}
