//! The generate convention the completion endpoints run on: the prompt goes
//! to the BYTES input `text_input`, the text comes from the BYTES output
//! `text_output` of every response (a decoupled model streams it). The
//! request's other members map as the generate extension maps its own: an
//! input of that name if the model declares one, a request parameter
//! otherwise. A response parameter `finish_reason` (a string) gives the
//! reason the model stopped; without one it is `stop`.

use std::sync::Arc;

use oxiserve_core::{LoadedModel, ModelMetadata, ResponseStream, TensorMetadata};
use oxiserve_types::{
    Error, InferRequest, InferResponse, ParameterValue, bytes_elements, element_count,
};
use serde_json::{Map, Value};

use super::error::{OpenAiError, OpenAiResult};
use crate::codec::decode_generate_request;

/// The input the prompt goes to.
pub(super) const TEXT_INPUT: &str = "text_input";
/// The output the text comes from.
pub(super) const TEXT_OUTPUT: &str = "text_output";
/// The response parameter that says why the model stopped.
const FINISH_REASON: &str = "finish_reason";
/// The generate member whose own members are mapped like top-level ones.
const PARAMETERS: &str = "parameters";

/// A generation ready to start.
#[derive(Debug)]
pub(super) struct Generation {
    pub model: Arc<LoadedModel>,
    pub request: InferRequest,
}

/// Checks that `model` (called `name`) follows the convention, and maps
/// `prompt` and the request's remaining `members` onto its inputs and
/// request parameters.
pub(super) fn prepare(
    model: Arc<LoadedModel>,
    name: &str,
    prompt: String,
    members: &Map<String, Value>,
) -> OpenAiResult<Generation> {
    let metadata = ModelMetadata::new(model.config(), Vec::new());
    check_convention(name, &metadata)?;
    let request = map_request(name, &metadata.inputs, (TEXT_INPUT, prompt), members)?;
    Ok(Generation { model, request })
}

/// The request of model `name` with input `text` (a name and its one
/// string) and the other members of an OpenAI request mapped as generate
/// maps a request's members.
pub(super) fn map_request(
    name: &str,
    inputs: &[TensorMetadata],
    text: (&str, String),
    members: &Map<String, Value>,
) -> OpenAiResult<InferRequest> {
    let body = generate_body(inputs, text, members);
    decode_generate_request(name, None, inputs, &body)
        .map_err(|e| OpenAiError::invalid(None, e.message))
}

/// Whether the model has the convention's BYTES input and output.
fn check_convention(name: &str, metadata: &ModelMetadata) -> OpenAiResult<()> {
    let wanted = [
        (&metadata.inputs, TEXT_INPUT, "input"),
        (&metadata.outputs, TEXT_OUTPUT, "output"),
    ];
    for (tensors, tensor, kind) in wanted {
        if !tensors
            .iter()
            .any(|t| t.name == tensor && t.datatype == "BYTES")
        {
            return Err(OpenAiError::invalid(
                Some("model"),
                format!(
                    "model '{name}' does not follow the generate convention: it has no \
                     BYTES {kind} '{tensor}'"
                ),
            ));
        }
    }
    Ok(())
}

/// The flat JSON object of a generate request: the members (nulls left
/// out), then the text input. An array or object the model has no input
/// for becomes its JSON text, as a request parameter holds no arrays;
/// `parameters` stays an object, whose members generate maps.
fn generate_body(
    inputs: &[TensorMetadata],
    (input, text): (&str, String),
    members: &Map<String, Value>,
) -> Vec<u8> {
    let mut flat = Map::new();
    for (key, value) in members {
        let is_input = inputs.iter().any(|input| &input.name == key);
        let value = match value {
            Value::Null => continue,
            Value::Array(_) | Value::Object(_) if !is_input && key != PARAMETERS => {
                Value::String(value.to_string())
            }
            value => value.clone(),
        };
        flat.insert(key.clone(), value);
    }
    flat.insert(input.to_string(), Value::String(text));
    Value::Object(flat).to_string().into_bytes()
}

/// Text generated so far and the reason the model gave for stopping.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Generated {
    pub text: String,
    /// The last `finish_reason` a response gave.
    pub reason: Option<String>,
}

impl Generated {
    /// What one response adds: the elements of its `text_output` (none if
    /// it has no such output), and its `finish_reason` parameter.
    pub fn of(response: &InferResponse) -> Result<Self, Error> {
        let reason = match response.parameters.get(FINISH_REASON) {
            Some(ParameterValue::String(reason)) => Some(reason.clone()),
            _ => None,
        };
        let Some(output) = response.outputs.iter().find(|o| o.name == TEXT_OUTPUT) else {
            return Ok(Self {
                text: String::new(),
                reason,
            });
        };
        let count = element_count(&output.shape).unwrap_or(0);
        let mut text = Vec::new();
        for element in bytes_elements(TEXT_OUTPUT, &output.data, count)? {
            text.extend_from_slice(element);
        }
        let text = String::from_utf8(text).map_err(|_| {
            Error::internal(format!(
                "output '{TEXT_OUTPUT}' of model '{}' is not UTF-8 text",
                response.model_name
            ))
        })?;
        Ok(Self { text, reason })
    }

    /// Appends a later response's text; its reason, if any, replaces ours.
    pub fn append(&mut self, later: Self) {
        self.text.push_str(&later.text);
        if later.reason.is_some() {
            self.reason = later.reason;
        }
    }

    /// OpenAI's `finish_reason`: the model's, or `stop`.
    pub fn finish_reason(&self) -> &str {
        finish_reason(self.reason.as_deref())
    }
}

/// OpenAI's `finish_reason` for the reason a model gave (`stop` if none).
pub(super) fn finish_reason(given: Option<&str>) -> &str {
    given.unwrap_or("stop")
}

/// The whole text of every response, in order.
pub(super) async fn collect(mut responses: ResponseStream) -> OpenAiResult<Generated> {
    let mut all = Generated::default();
    while let Some(event) = responses.next().await {
        if let Some(response) = event.response {
            all.append(Generated::of(&response?)?);
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_types::{DataType, Tensor, encode_bytes_elements};
    use serde_json::json;

    use super::*;

    fn input(name: &str, datatype: &str) -> TensorMetadata {
        TensorMetadata {
            name: name.to_string(),
            datatype: datatype.to_string(),
            shape: vec![1],
        }
    }

    #[test]
    fn members_go_to_inputs_when_declared_else_to_parameters() {
        let inputs = [input(TEXT_INPUT, "BYTES"), input("max_tokens", "INT32")];
        let members = json!({"max_tokens": 5, "temperature": 0.5, "stop": ["a", "b"],
            "seed": null, "parameters": {"top_k": 3}});
        let Value::Object(members) = members else {
            unreachable!()
        };
        let request = map_request("m", &inputs, (TEXT_INPUT, "hi".into()), &members).unwrap();
        let names: Vec<&str> = request.inputs.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["max_tokens", TEXT_INPUT]);
        assert_eq!(&request.inputs[0].data[..], 5i32.to_le_bytes());
        assert_eq!(&request.inputs[1].data[..], b"\x02\0\0\0hi");
        let p = &request.parameters;
        assert_eq!(p["temperature"], ParameterValue::Double(0.5));
        assert_eq!(p["stop"], ParameterValue::String(r#"["a","b"]"#.into()));
        assert_eq!(p["top_k"], ParameterValue::Int(3));
        assert!(!p.contains_key("seed"), "null is left out");
    }

    fn response(texts: &[&str], reason: Option<&str>) -> InferResponse {
        let data: Bytes = encode_bytes_elements(texts);
        let shape = vec![texts.len() as i64];
        let mut response = InferResponse {
            outputs: vec![Tensor::new(TEXT_OUTPUT, DataType::Bytes, shape, data)],
            ..Default::default()
        };
        if let Some(reason) = reason {
            response
                .parameters
                .insert(FINISH_REASON.into(), ParameterValue::String(reason.into()));
        }
        response
    }

    #[test]
    fn responses_add_their_text_and_the_last_reason_counts() {
        let mut all = Generated::of(&response(&["a", "b"], None)).unwrap();
        assert_eq!((all.text.as_str(), all.finish_reason()), ("ab", "stop"));
        all.append(Generated::of(&response(&["c"], Some("length"))).unwrap());
        all.append(Generated::of(&InferResponse::default()).unwrap());
        assert_eq!((all.text.as_str(), all.finish_reason()), ("abc", "length"));
    }

    #[test]
    fn text_must_be_utf8() {
        assert_eq!(
            Generated::of(&response(&["caf\u{e9}"], None)).unwrap().text,
            "caf\u{e9}"
        );
        let mut bad = response(&[""], None);
        bad.outputs[0].data = Bytes::from_static(b"\x01\0\0\0\xff");
        let error = Generated::of(&bad).unwrap_err();
        assert!(error.message.contains("is not UTF-8"), "{}", error.message);
    }
}
