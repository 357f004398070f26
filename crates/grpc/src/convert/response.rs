//! The core's [`InferResponse`] -> `ModelInferResponse`.

use bytes::Bytes;
use oxiserve_proto::inference::{ModelInferResponse, model_infer_response::InferOutputTensor};
use oxiserve_types::InferResponse;

use super::parameters;

/// The output parameter that says an output was written to shared memory.
const SHARED_MEMORY_REGION: &str = "shared_memory_region";

/// Encodes `response` as Triton does: every output's data in
/// `raw_output_contents`, in output order, shared without a copy. An output
/// written to shared memory keeps its parameters and has empty raw contents.
pub(crate) fn encode(response: InferResponse) -> ModelInferResponse {
    let mut outputs = Vec::with_capacity(response.outputs.len());
    let mut raw = Vec::with_capacity(response.outputs.len());
    for tensor in response.outputs {
        let in_shared_memory = tensor.parameters.contains_key(SHARED_MEMORY_REGION);
        raw.push(if in_shared_memory {
            Bytes::new()
        } else {
            tensor.data
        });
        outputs.push(InferOutputTensor {
            name: tensor.name,
            datatype: tensor.datatype.wire_name().to_string(),
            shape: tensor.shape,
            parameters: parameters::to_proto(&tensor.parameters),
            contents: None,
        });
    }
    ModelInferResponse {
        model_name: response.model_name,
        model_version: response.model_version.to_string(),
        id: response.id,
        parameters: parameters::to_proto(&response.parameters),
        outputs,
        raw_output_contents: raw,
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_types::{DataType, ParameterValue, Tensor};

    use super::*;

    #[test]
    fn shared_memory_outputs_have_no_raw_contents() {
        let mut in_shm = Tensor::new("B", DataType::Int8, vec![1], Bytes::from_static(&[9]));
        in_shm.parameters.insert(
            SHARED_MEMORY_REGION.into(),
            ParameterValue::String("r".into()),
        );
        let response = InferResponse {
            model_name: "m".into(),
            model_version: 3,
            id: "x".into(),
            outputs: vec![
                Tensor::new("A", DataType::Int8, vec![1], Bytes::from_static(&[7])),
                in_shm,
            ],
            ..Default::default()
        };
        let encoded = encode(response);
        assert_eq!(encoded.model_version, "3");
        assert_eq!(
            encoded.raw_output_contents,
            vec![Bytes::from_static(&[7]), Bytes::new()]
        );
        assert!(
            encoded.outputs[1]
                .parameters
                .contains_key(SHARED_MEMORY_REGION)
        );
        assert_eq!(encoded.outputs[0].datatype, "INT8");
    }
}
