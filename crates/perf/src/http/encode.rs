//! Request bodies, encoded once before the load starts: JSON tensors or
//! Triton's binary tensor extension (JSON header + raw bytes).

use bytes::Bytes;
use oxiserve_client::http::json_data;
use serde_json::{Map, Value, json};

use crate::{
    cli::TensorFormat, error::Result, inputs::InputTensor, sequence::SequenceStep, shm::Placement,
};

/// A ready-to-send inference body.
#[derive(Debug, Clone)]
pub struct PreparedBody {
    pub body: Bytes,
    /// The `Inference-Header-Content-Length` value, for binary bodies.
    pub header_length: Option<usize>,
    /// Where request parameters can be added to the JSON header.
    pub parameters: ParameterSlot,
}

/// A place in a JSON header for more request parameters: the offset just
/// after the opening brace of the header (`inside: false`: the header has no
/// `parameters` yet) or of its `parameters` object (`inside: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterSlot {
    pub at: usize,
    pub inside: bool,
}

impl PreparedBody {
    /// The body with a sequence's parameters added, and its header length.
    pub fn with_sequence(&self, step: SequenceStep) -> (Bytes, Option<usize>) {
        let members = step.json_members();
        let added = match self.parameters.inside {
            true => format!("{members},"),
            false => format!("\"parameters\":{{{members}}},"),
        };
        let at = self.parameters.at;
        let mut body = Vec::with_capacity(self.body.len() + added.len());
        body.extend_from_slice(&self.body[..at]);
        body.extend_from_slice(added.as_bytes());
        body.extend_from_slice(&self.body[at..]);
        (
            Bytes::from(body),
            self.header_length.map(|n| n + added.len()),
        )
    }
}

/// The JSON text of a header: `parameters` (when there are any) first, so
/// more can be added at a known offset.
fn header_json(
    parameters: Map<String, Value>,
    rest: Map<String, Value>,
) -> (Vec<u8>, ParameterSlot) {
    let rest = Value::Object(rest).to_string();
    if parameters.is_empty() {
        return (
            rest.into_bytes(),
            ParameterSlot {
                at: 1,
                inside: false,
            },
        );
    }
    let head = "{\"parameters\":{";
    let parameters = Value::Object(parameters).to_string();
    let text = format!("{head}{},{}", &parameters[1..], &rest[1..]);
    (
        text.into_bytes(),
        ParameterSlot {
            at: head.len(),
            inside: true,
        },
    )
}

/// Encodes one request's inputs.
pub fn encode(
    inputs: &[InputTensor],
    input_format: TensorFormat,
    output_format: TensorFormat,
) -> Result<PreparedBody> {
    let binary = input_format == TensorFormat::Binary;
    let tensors = inputs
        .iter()
        .map(|t| {
            let mut entry =
                json!({"name": t.name, "shape": t.shape, "datatype": t.datatype.wire_name()});
            if binary {
                entry["parameters"] = json!({"binary_data_size": t.data.len()});
            } else {
                entry["data"] = Value::Array(json_data(&t.name, t.datatype, &t.shape, &t.data)?);
            }
            Ok(entry)
        })
        .collect::<Result<Vec<Value>>>()?;
    let mut rest = Map::new();
    rest.insert("inputs".into(), Value::Array(tensors));
    let mut parameters = Map::new();
    if output_format == TensorFormat::Binary {
        parameters.insert("binary_data_output".into(), json!(true));
    }
    let (header, slot) = header_json(parameters, rest);
    if !binary {
        return Ok(PreparedBody {
            body: Bytes::from(header),
            header_length: None,
            parameters: slot,
        });
    }
    let header_length = header.len();
    let mut body = header;
    for t in inputs {
        body.extend_from_slice(&t.data);
    }
    Ok(PreparedBody {
        body: Bytes::from(body),
        header_length: Some(header_length),
        parameters: slot,
    })
}

/// A JSON body whose inputs and outputs live in shared memory regions.
pub fn encode_shared(
    inputs: &[InputTensor],
    placed: &[Placement],
    outputs: &[(String, Placement)],
) -> PreparedBody {
    let region = |p: &Placement| json!({"shared_memory_region": p.region, "shared_memory_byte_size": p.size, "shared_memory_offset": p.offset});
    let inputs: Vec<Value> = inputs
        .iter()
        .zip(placed)
        .map(|(t, p)| json!({"name": t.name, "shape": t.shape, "datatype": t.datatype.wire_name(), "parameters": region(p)}))
        .collect();
    let outputs: Vec<Value> = outputs
        .iter()
        .map(|(name, p)| json!({"name": name, "parameters": region(p)}))
        .collect();
    let body = json!({"inputs": inputs, "outputs": outputs}).to_string();
    PreparedBody {
        body: Bytes::from(body),
        header_length: None,
        parameters: ParameterSlot {
            at: 1,
            inside: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_types::DataType;

    use super::*;

    fn tensor() -> InputTensor {
        InputTensor {
            name: "IN".into(),
            datatype: DataType::Int32,
            shape: vec![1, 2],
            data: Bytes::from_static(&[1, 0, 0, 0, 255, 255, 255, 255]),
        }
    }

    #[test]
    fn json_body_carries_values() {
        let p = encode(&[tensor()], TensorFormat::Json, TensorFormat::Json).unwrap();
        assert_eq!(p.header_length, None);
        let v: Value = serde_json::from_slice(&p.body).unwrap();
        assert_eq!(
            v,
            json!({"inputs": [{"name": "IN", "shape": [1, 2], "datatype": "INT32", "data": [1, -1]}]})
        );
    }

    #[test]
    fn shared_body_names_regions() {
        let at = |offset| Placement {
            region: "r".into(),
            offset,
            size: 8,
        };
        let p = encode_shared(&[tensor()], &[at(16)], &[("OUT".into(), at(0))]);
        let v: Value = serde_json::from_slice(&p.body).unwrap();
        let input = &v["inputs"][0];
        assert!(input.get("data").is_none());
        assert_eq!(
            input["parameters"],
            json!({"shared_memory_region": "r", "shared_memory_byte_size": 8, "shared_memory_offset": 16})
        );
        assert_eq!(v["outputs"][0]["parameters"]["shared_memory_offset"], 0);
    }

    #[test]
    fn binary_body_is_header_then_bytes() {
        let p = encode(&[tensor()], TensorFormat::Binary, TensorFormat::Binary).unwrap();
        let n = p.header_length.unwrap();
        let v: Value = serde_json::from_slice(&p.body[..n]).unwrap();
        assert_eq!(v["inputs"][0]["parameters"]["binary_data_size"], 8);
        assert_eq!(v["parameters"]["binary_data_output"], true);
        assert_eq!(&p.body[n..], &tensor().data[..]);
    }

    #[test]
    fn sequence_parameters_join_the_header() {
        let step = SequenceStep {
            id: 42,
            start: true,
            end: false,
        };
        let sequence = json!({"sequence_id": 42, "sequence_start": true, "sequence_end": false});
        // a JSON body without parameters: they are added
        let p = encode(&[tensor()], TensorFormat::Json, TensorFormat::Json).unwrap();
        let (body, length) = p.with_sequence(step);
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!((v["parameters"].clone(), length), (sequence.clone(), None));
        assert_eq!(v["inputs"][0]["data"], json!([1, -1]));
        // a binary body with parameters: they are merged, the header grows
        let p = encode(&[tensor()], TensorFormat::Binary, TensorFormat::Binary).unwrap();
        let (body, length) = p.with_sequence(step);
        let n = length.unwrap();
        let v: Value = serde_json::from_slice(&body[..n]).unwrap();
        let mut merged = sequence;
        merged["binary_data_output"] = json!(true);
        assert_eq!(v["parameters"], merged);
        assert_eq!(&body[n..], &tensor().data[..]);
        // shared memory bodies too
        let at = Placement {
            region: "r".into(),
            offset: 0,
            size: 8,
        };
        let p = encode_shared(&[tensor()], std::slice::from_ref(&at), &[]);
        let v: Value = serde_json::from_slice(&p.with_sequence(step).0).unwrap();
        assert_eq!(v["parameters"]["sequence_id"], 42);
    }
}
