//! The ModelInferRequest of each prepared request, framed once: inputs as
//! raw little-endian contents. Requests to a decoupled model ask for an empty
//! final response (`triton_enable_empty_final_response`), so the stream says
//! when each request is complete. The messages are oxiserve-client's.

use bytes::{BufMut, Bytes, BytesMut};
use oxiserve_client::{
    InferInput, InferRequest, InferRequestedOutput, ParameterValue, grpc::model_infer_request,
};
use prost::Message;

use super::frame;
use crate::{inputs::InputTensor, sequence::SequenceStep, shm::Placement};

/// The request message (for streaming) and its gRPC frame.
pub fn request(
    model: &str,
    version: Option<&str>,
    inputs: &[InputTensor],
    decoupled: bool,
) -> Bytes {
    let request = inputs
        .iter()
        .fold(head(model, version, decoupled), |r, t| r.input(input(t)));
    frame::encode(&model_infer_request(&request))
}

/// A framed request whose inputs and outputs live in shared memory regions.
pub fn request_shared(
    model: &str,
    version: Option<&str>,
    inputs: &[InputTensor],
    placed: &[Placement],
    outputs: &[(String, Placement)],
    decoupled: bool,
) -> Bytes {
    let request = inputs
        .iter()
        .zip(placed)
        .fold(head(model, version, decoupled), |r, (t, p)| {
            r.input(input(t).with_shared_memory(&p.region, p.offset))
        });
    let request = outputs.iter().fold(request, |r, (name, p)| {
        r.output(InferRequestedOutput::new(name).with_shared_memory(&p.region, p.size, p.offset))
    });
    frame::encode(&model_infer_request(&request))
}

/// A framed request with its place in a sequence added: the parameters'
/// map entries appended to the message (protobuf merges repeated map fields).
pub fn with_sequence(framed: &Bytes, step: SequenceStep) -> Bytes {
    let marks = InferRequest::default().sequence(step.id, step.start, step.end);
    let extra = model_infer_request(&marks).encode_to_vec();
    let message = &framed[5..];
    let mut out = BytesMut::with_capacity(framed.len() + extra.len());
    out.put_u8(0);
    out.put_u32((message.len() + extra.len()) as u32);
    out.extend_from_slice(message);
    out.extend_from_slice(&extra);
    out.freeze()
}

/// The model and the request parameters every request of a run carries:
/// for a decoupled model, the one that makes its stream end each request with
/// a response flagged `triton_final_response`.
fn head(model: &str, version: Option<&str>, decoupled: bool) -> InferRequest {
    let request = InferRequest::new(model).version(version.unwrap_or_default());
    match decoupled {
        true => request.parameter(
            "triton_enable_empty_final_response",
            ParameterValue::Bool(true),
        ),
        false => request,
    }
}

fn input(t: &InputTensor) -> InferInput {
    InferInput::from_raw(&t.name, t.datatype, t.shape.clone(), t.data.clone())
}

#[cfg(test)]
mod tests {
    use oxiserve_client::proto::{ModelInferRequest, infer_parameter::ParameterChoice};
    use oxiserve_types::DataType;

    use super::*;

    #[test]
    fn request_carries_raw_contents() {
        let input = InputTensor {
            name: "IN".into(),
            datatype: DataType::Uint8,
            shape: vec![1, 3],
            data: Bytes::from_static(&[1, 2, 3]),
        };
        let framed = request("m", Some("2"), std::slice::from_ref(&input), false);
        assert_eq!(framed[0], 0);
        assert_eq!(
            u32::from_be_bytes(framed[1..5].try_into().unwrap()) as usize,
            framed.len() - 5
        );
        let decoded = ModelInferRequest::decode(&framed[5..]).unwrap();
        assert_eq!(
            (decoded.model_name.as_str(), decoded.model_version.as_str()),
            ("m", "2")
        );
        assert_eq!(decoded.inputs[0].shape, [1, 3]);
        assert_eq!(decoded.inputs[0].datatype, "UINT8");
        assert_eq!(&decoded.raw_input_contents[0][..], [1, 2, 3]);
        assert!(decoded.parameters.is_empty());
        let step = SequenceStep {
            id: 7,
            start: true,
            end: false,
        };
        let marked = ModelInferRequest::decode(&with_sequence(&framed, step)[5..]).unwrap();
        assert_eq!(marked.inputs, decoded.inputs);
        assert_eq!(
            marked.parameters["sequence_id"].parameter_choice,
            Some(ParameterChoice::Int64Param(7))
        );
        assert_eq!(
            marked.parameters["sequence_start"].parameter_choice,
            Some(ParameterChoice::BoolParam(true))
        );
        let decoupled = ModelInferRequest::decode(&request("m", None, &[input], true)[5..]);
        assert_eq!(
            decoupled.unwrap().parameters["triton_enable_empty_final_response"].parameter_choice,
            Some(ParameterChoice::BoolParam(true))
        );
    }
}
