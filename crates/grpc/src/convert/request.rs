//! `ModelInferRequest` -> the core's [`InferRequest`].

use bytes::Bytes;
use oxiserve_proto::inference::{
    InferParameter, ModelInferRequest, infer_parameter::ParameterChoice,
    model_infer_request::InferInputTensor,
};
use oxiserve_types::{DataType, Error, InferRequest, RequestedOutput, Result, Tensor};

use super::{
    contents::{self, Target},
    parameters,
};
use crate::version;

/// A decoded request and what the frontend keeps from it.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub request: InferRequest,
    /// The client asked for an empty final response on a decoupled stream.
    pub empty_final_response: bool,
}

/// Decodes `message`: inputs from `contents` or, in input order, from
/// `raw_input_contents` (shared without a copy), as Triton reads them.
pub(crate) fn decode(message: ModelInferRequest) -> Result<Decoded> {
    let model_version = version::parse(&message.model_version)?;
    let params = parameters::request(message.parameters)?;
    let model = message.model_name;
    let given_raw = message.raw_input_contents.len();
    let mut raw = message.raw_input_contents.into_iter();
    let mut inputs = Vec::with_capacity(message.inputs.len());
    for input in message.inputs {
        inputs.push(input_tensor(&model, input, given_raw > 0, &mut raw)?);
    }
    if raw.len() > 0 {
        // Triton ignores them; a client that sends more data than inputs
        // has lost track of its inputs, so its request is refused.
        return Err(Error::invalid_arg(format!(
            "{given_raw} raw_input_contents given for model '{model}' but only {} of its \
             inputs read one",
            given_raw - raw.len()
        )));
    }
    let outputs = message.outputs.into_iter().map(requested_output).collect();
    Ok(Decoded {
        request: InferRequest {
            model_name: model,
            model_version,
            id: message.id,
            inputs,
            outputs,
            parameters: params.parameters,
        },
        empty_final_response: params.empty_final_response,
    })
}

fn input_tensor(
    model: &str,
    input: InferInputTensor,
    has_raw: bool,
    raw: &mut impl Iterator<Item = Bytes>,
) -> Result<Tensor> {
    let name = input.name;
    let Some(datatype) = DataType::from_wire_name(&input.datatype) else {
        return Err(Error::invalid_arg(format!(
            "invalid datatype '{}' for input '{name}' of model '{model}'",
            input.datatype
        )));
    };
    let tensor_parameters = parameters::tensor(input.parameters);
    let data = match input.contents {
        // The core reads it from the region the parameters name.
        None if tensor_parameters.contains_key("shared_memory_region") => Bytes::new(),
        Some(_) if has_raw => {
            return Err(Error::invalid_arg(format!(
                "contents field must not be specified when using raw_input_contents for \
                 '{name}' for model '{model}'"
            )));
        }
        Some(contents) => {
            let target = Target {
                model,
                input: &name,
                datatype,
            };
            contents::to_raw(&target, &contents)?
        }
        None => raw.next().ok_or_else(|| {
            Error::invalid_arg(format!(
                "unable to find data for input tensor '{name}' for model '{model}' in request."
            ))
        })?,
    };
    Ok(Tensor {
        name,
        datatype,
        shape: input.shape,
        data,
        parameters: tensor_parameters,
    })
}

/// A requested output; `classification` (top-k) becomes its class count.
fn requested_output(
    output: oxiserve_proto::inference::model_infer_request::InferRequestedOutputTensor,
) -> RequestedOutput {
    let class_count = match output.parameters.get("classification") {
        Some(InferParameter {
            parameter_choice: Some(ParameterChoice::Int64Param(k)),
        }) => u32::try_from(*k).unwrap_or(0),
        _ => 0,
    };
    RequestedOutput {
        name: output.name,
        class_count,
        parameters: parameters::tensor(output.parameters),
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::InferTensorContents;

    use super::*;

    fn input(name: &str, contents: Option<InferTensorContents>) -> InferInputTensor {
        InferInputTensor {
            name: name.into(),
            datatype: "INT32".into(),
            shape: vec![1],
            contents,
            ..Default::default()
        }
    }

    #[test]
    fn raw_contents_go_in_input_order() {
        let message = ModelInferRequest {
            model_name: "m".into(),
            model_version: "2".into(),
            inputs: vec![input("A", None), input("B", None)],
            raw_input_contents: vec![
                Bytes::from_static(&[1, 0, 0, 0]),
                Bytes::from_static(&[2, 0, 0, 0]),
            ],
            ..Default::default()
        };
        let decoded = decode(message).unwrap();
        assert_eq!(decoded.request.model_version, Some(2));
        assert_eq!(&decoded.request.inputs[1].data[..], &[2, 0, 0, 0]);
    }

    #[test]
    fn missing_or_doubled_data_is_refused() {
        let message = ModelInferRequest {
            model_name: "m".into(),
            inputs: vec![input("A", None)],
            ..Default::default()
        };
        let err = decode(message).unwrap_err();
        assert!(
            err.message
                .contains("unable to find data for input tensor 'A'"),
            "{err}"
        );
        let message = ModelInferRequest {
            model_name: "m".into(),
            inputs: vec![input("A", Some(InferTensorContents::default()))],
            raw_input_contents: vec![Bytes::new()],
            ..Default::default()
        };
        let err = decode(message).unwrap_err();
        assert!(
            err.message.contains("contents field must not be specified"),
            "{err}"
        );
    }

    #[test]
    fn surplus_raw_contents_are_refused() {
        let message = ModelInferRequest {
            model_name: "m".into(),
            inputs: vec![input("A", None)],
            raw_input_contents: vec![Bytes::from_static(&[1, 0, 0, 0]), Bytes::new()],
            ..Default::default()
        };
        let err = decode(message).unwrap_err();
        assert_eq!(
            err.message,
            "2 raw_input_contents given for model 'm' but only 1 of its inputs read one"
        );
    }
}
