//! [`InferRequest`] -> `ModelInferRequest` (inputs as raw contents) and
//! `ModelInferResponse` -> [`InferResult`] (outputs from raw contents).

use std::collections::HashMap;

use oxiserve_proto::inference::{
    InferParameter, ModelInferRequest, ModelInferResponse,
    infer_parameter::ParameterChoice,
    model_infer_request::{InferInputTensor, InferRequestedOutputTensor},
};
use oxiserve_types::{DataType, ParameterValue, Parameters, Tensor};

use crate::{
    error::{Error, Result},
    request::InferRequest,
    result::InferResult,
};

/// The `ModelInferRequest` of `request`: every input that is not in shared
/// memory has its data in `raw_input_contents`, in input order.
pub fn model_infer_request(request: &InferRequest) -> ModelInferRequest {
    let inputs = request.inputs();
    ModelInferRequest {
        model_name: request.model_name().into(),
        model_version: request.model_version().into(),
        id: request.request_id().into(),
        parameters: to_proto(request.parameters()),
        inputs: inputs
            .iter()
            .map(|input| {
                let t = input.tensor();
                InferInputTensor {
                    name: t.name.clone(),
                    datatype: t.datatype.wire_name().into(),
                    shape: t.shape.clone(),
                    parameters: to_proto(&t.parameters),
                    contents: None,
                }
            })
            .collect(),
        outputs: request
            .outputs()
            .iter()
            .map(|o| InferRequestedOutputTensor {
                name: o.name().into(),
                parameters: to_proto(o.parameters()),
            })
            .collect(),
        raw_input_contents: inputs
            .iter()
            .filter(|i| !i.in_shared_memory())
            .map(|i| i.data().clone())
            .collect(),
    }
}

/// The result of `response`: output `i` takes `raw_output_contents[i]`;
/// when there are fewer, the outputs whose parameters put them in shared
/// memory take none.
pub(crate) fn infer_result(response: ModelInferResponse) -> Result<InferResult> {
    let every_output = response.raw_output_contents.len() == response.outputs.len();
    let mut raw = response.raw_output_contents.into_iter();
    let outputs = response
        .outputs
        .into_iter()
        .map(|o| {
            let datatype = DataType::from_wire_name(&o.datatype).ok_or_else(|| {
                Error::protocol(format!("output '{}' has datatype '{}'", o.name, o.datatype))
            })?;
            let parameters = from_proto(o.parameters);
            let data = match every_output || !parameters.contains_key("shared_memory_region") {
                true => raw.next().unwrap_or_default(),
                false => bytes::Bytes::new(),
            };
            Ok(Tensor {
                parameters,
                ..Tensor::new(o.name, datatype, o.shape, data)
            })
        })
        .collect::<Result<_>>()?;
    Ok(InferResult {
        model_name: response.model_name,
        model_version: response.model_version,
        id: response.id,
        parameters: from_proto(response.parameters),
        outputs,
    })
}

/// Parameters as `InferParameter`s; unsigned values that fit go as int64,
/// the type Triton expects for its own (`sequence_id`, shared memory sizes).
fn to_proto(parameters: &Parameters) -> HashMap<String, InferParameter> {
    parameters
        .iter()
        .map(|(key, value)| {
            let choice = match value {
                ParameterValue::Bool(b) => ParameterChoice::BoolParam(*b),
                ParameterValue::Int(i) => ParameterChoice::Int64Param(*i),
                ParameterValue::Uint(u) => match i64::try_from(*u) {
                    Ok(i) => ParameterChoice::Int64Param(i),
                    Err(_) => ParameterChoice::Uint64Param(*u),
                },
                ParameterValue::Double(d) => ParameterChoice::DoubleParam(*d),
                ParameterValue::String(s) => ParameterChoice::StringParam(s.clone()),
            };
            let parameter = InferParameter {
                parameter_choice: Some(choice),
            };
            (key.clone(), parameter)
        })
        .collect()
}

fn from_proto(parameters: HashMap<String, InferParameter>) -> Parameters {
    parameters
        .into_iter()
        .filter_map(|(key, p)| {
            let value = match p.parameter_choice? {
                ParameterChoice::BoolParam(b) => ParameterValue::Bool(b),
                ParameterChoice::Int64Param(i) => ParameterValue::Int(i),
                ParameterChoice::Uint64Param(u) => ParameterValue::Uint(u),
                ParameterChoice::DoubleParam(d) => ParameterValue::Double(d),
                ParameterChoice::StringParam(s) => ParameterValue::String(s),
            };
            Some((key, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_proto::inference::model_infer_response::InferOutputTensor;

    use super::*;
    use crate::{input::InferInput, output::InferRequestedOutput};

    #[test]
    fn requests_carry_raw_contents_for_inputs_with_data() {
        let input = |name| InferInput::from_raw(name, DataType::Uint8, vec![1], vec![9]);
        let request = InferRequest::new("m")
            .version("2")
            .sequence(5, true, false)
            .input(input("A").with_shared_memory("r", 0))
            .input(input("B"))
            .output(InferRequestedOutput::new("OUT").class_count(3));
        let message = model_infer_request(&request);
        assert_eq!(message.model_version, "2");
        assert_eq!(message.raw_input_contents, [Bytes::from_static(&[9])]);
        assert_eq!(
            message.parameters["sequence_id"].parameter_choice,
            Some(ParameterChoice::Int64Param(5))
        );
        assert_eq!(
            message.outputs[0].parameters["classification"].parameter_choice,
            Some(ParameterChoice::Int64Param(3))
        );
    }

    #[test]
    fn responses_pair_outputs_with_raw_contents() {
        let output = |name: &str, parameters| InferOutputTensor {
            name: name.into(),
            datatype: "UINT8".into(),
            shape: vec![1],
            parameters,
            contents: None,
        };
        let region = HashMap::from([(
            "shared_memory_region".to_string(),
            InferParameter {
                parameter_choice: Some(ParameterChoice::StringParam("r".into())),
            },
        )]);
        let response = ModelInferResponse {
            outputs: vec![output("A", region), output("B", HashMap::new())],
            raw_output_contents: vec![Bytes::from_static(&[4])],
            ..ModelInferResponse::default()
        };
        let result = infer_result(response).unwrap();
        assert!(result.output("A").unwrap().data.is_empty());
        assert_eq!(&result.output("B").unwrap().data[..], [4]);
    }
}
