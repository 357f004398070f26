//! An [`InferRequest`] as the body of `POST .../infer`: a JSON header, then
//! the binary tensor data of the inputs that carry it (Triton's binary
//! tensor data extension).

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{json_data::json_data, parameters};
use crate::{
    error::Result, input::InferInput, output::InferRequestedOutput, request::InferRequest,
};

/// A request body and, when binary data follows its JSON header, the
/// header's length (`Inference-Header-Content-Length`).
#[derive(Debug)]
pub(crate) struct Body {
    pub bytes: Bytes,
    pub header_length: Option<usize>,
}

/// Encodes `request`. With no output named, every output comes back as
/// binary data (`binary_data_output`).
pub(crate) fn encode(request: &InferRequest) -> Result<Body> {
    let mut header = Map::new();
    if !request.request_id().is_empty() {
        header.insert("id".into(), json!(request.request_id()));
    }
    let mut request_parameters = parameters::to_json(request.parameters());
    if request.outputs().is_empty() {
        request_parameters.insert("binary_data_output".into(), json!(true));
    }
    if !request_parameters.is_empty() {
        header.insert("parameters".into(), Value::Object(request_parameters));
    }
    let mut binary = Vec::new();
    let mut inputs = Vec::with_capacity(request.inputs().len());
    for input in request.inputs() {
        inputs.push(input_json(input, &mut binary)?);
    }
    header.insert("inputs".into(), Value::Array(inputs));
    if !request.outputs().is_empty() {
        let outputs = request.outputs().iter().map(output_json).collect();
        header.insert("outputs".into(), Value::Array(outputs));
    }
    let header = serde_json::to_vec(&Value::Object(header)).expect("JSON values serialize");
    if binary.is_empty() {
        return Ok(Body {
            bytes: header.into(),
            header_length: None,
        });
    }
    let header_length = header.len();
    let mut bytes = header;
    bytes.reserve_exact(binary.iter().map(|d: &&Bytes| d.len()).sum());
    for data in binary {
        bytes.extend_from_slice(data);
    }
    Ok(Body {
        bytes: bytes.into(),
        header_length: Some(header_length),
    })
}

/// One input's JSON; its data joins `binary` when it travels as binary data.
fn input_json<'a>(input: &'a InferInput, binary: &mut Vec<&'a Bytes>) -> Result<Value> {
    let t = input.tensor();
    let mut entry = json!({"name": t.name, "shape": t.shape, "datatype": t.datatype.wire_name()});
    let mut tensor_parameters = parameters::to_json(&t.parameters);
    match (input.in_shared_memory(), input.is_binary()) {
        (true, _) => {}
        (false, true) => {
            tensor_parameters.insert("binary_data_size".into(), json!(t.data.len()));
            binary.push(&t.data);
        }
        (false, false) => {
            entry["data"] = Value::Array(json_data(&t.name, t.datatype, &t.shape, &t.data)?);
        }
    }
    if !tensor_parameters.is_empty() {
        entry["parameters"] = Value::Object(tensor_parameters);
    }
    Ok(entry)
}

fn output_json(output: &InferRequestedOutput) -> Value {
    let mut tensor_parameters = parameters::to_json(output.parameters());
    if output.is_binary() {
        tensor_parameters.insert("binary_data".into(), json!(true));
    }
    json!({"name": output.name(), "parameters": tensor_parameters})
}

#[cfg(test)]
mod tests {
    use oxiserve_types::DataType;

    use super::*;

    fn input() -> InferInput {
        InferInput::from_raw(
            "IN",
            DataType::Int32,
            vec![1, 2],
            vec![1, 0, 0, 0, 2, 0, 0, 0],
        )
    }

    #[test]
    fn binary_inputs_follow_the_header() {
        let body = encode(&InferRequest::new("m").id("7").input(input())).unwrap();
        let n = body.header_length.unwrap();
        let header: Value = serde_json::from_slice(&body.bytes[..n]).unwrap();
        assert_eq!(
            header,
            json!({"id": "7", "parameters": {"binary_data_output": true}, "inputs": [{"name": "IN",
                "shape": [1, 2], "datatype": "INT32", "parameters": {"binary_data_size": 8}}]})
        );
        assert_eq!(&body.bytes[n..], &input().data()[..]);
    }

    #[test]
    fn json_and_shared_memory_tensors_carry_no_binary_data() {
        let request = InferRequest::new("m")
            .input(input().binary_data(false))
            .input(input().with_shared_memory("r", 0))
            .output(InferRequestedOutput::new("OUT").binary_data(false))
            .output(InferRequestedOutput::new("CLS").class_count(2));
        let body = encode(&request).unwrap();
        assert_eq!(body.header_length, None);
        let header: Value = serde_json::from_slice(&body.bytes).unwrap();
        assert!(header.get("parameters").is_none());
        assert_eq!(header["inputs"][0]["data"], json!([1, 2]));
        assert_eq!(
            header["inputs"][1]["parameters"]["shared_memory_region"],
            "r"
        );
        assert_eq!(
            header["outputs"][0],
            json!({"name": "OUT", "parameters": {}})
        );
        assert_eq!(
            header["outputs"][1]["parameters"],
            json!({"classification": 2, "binary_data": true})
        );
    }
}
