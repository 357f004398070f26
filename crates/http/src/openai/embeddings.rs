//! `POST /v1/embeddings`: for a model with one BYTES input and one FP32 or
//! FP64 output, one inference per text (all started at once, so a dynamic
//! batcher can batch them), the output's elements being the vector.
//! `encoding_format` `base64` sends each vector as base64 of its
//! little-endian FP32 values (the `openai` client asks for it). `usage` is
//! zero: oxiserve does not count tokens.

use axum::{
    body::Bytes,
    extract::{State, rejection::BytesRejection},
    response::Response,
};
use base64::Engine;
use oxiserve_core::{ModelMetadata, TensorMetadata};
use oxiserve_types::{DataType, Error, InferResponse};
use serde::Serialize;
use serde_json::Value;

use super::{
    body::Body,
    error::{OpenAiError, OpenAiResult},
    generation::map_request,
    models::find,
    reply::json,
};
use crate::app::App;

/// An embedding as OpenAI sends it.
#[derive(Debug, Serialize)]
struct Embedding {
    object: &'static str,
    index: usize,
    embedding: Vector,
}

/// A vector: a list of numbers, or base64 of its FP32 bytes.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
enum Vector {
    Floats(Vec<f32>),
    Base64(String),
}

#[derive(Debug, Serialize)]
struct Usage {
    prompt_tokens: u64,
    total_tokens: u64,
}

/// The answer: every text's embedding.
#[derive(Debug, Serialize)]
struct EmbeddingList {
    object: &'static str,
    data: Vec<Embedding>,
    model: String,
    usage: Usage,
}

/// The embeddings of the request's texts, in their order.
pub(super) async fn embeddings(
    State(app): State<App>,
    body: Result<Bytes, BytesRejection>,
) -> OpenAiResult<Response> {
    let mut body = Body::read(&app, body)?;
    let name = body.required_string("model")?;
    let texts = take_texts(&mut body)?;
    let base64 = match body.take("encoding_format") {
        None => false,
        Some(format) if format == "float" => false,
        Some(format) if format == "base64" => true,
        Some(_) => {
            return Err(OpenAiError::invalid(
                Some("encoding_format"),
                "'encoding_format' must be 'float' or 'base64'",
            ));
        }
    };
    body.refuse("dimensions", |_| false, "the model's vectors have one size")?;
    body.take("user");
    let members = body.rest();
    let model = find(&app, &name)?;
    let metadata = ModelMetadata::new(model.config(), Vec::new());
    let (input, output) = signature(&name, &metadata)?;
    let mut pending = Vec::with_capacity(texts.len());
    for text in texts {
        let request = map_request(&name, &metadata.inputs, (input, text), &members)?;
        pending.push(app.server.infer_on(&model, request)?);
    }
    let mut data = Vec::with_capacity(pending.len());
    for (index, responses) in pending.into_iter().enumerate() {
        let floats = vector(&responses.single().await?, output)?;
        let embedding = match base64 {
            true => Vector::Base64(to_base64(&floats)),
            false => Vector::Floats(floats),
        };
        data.push(Embedding {
            object: "embedding",
            index,
            embedding,
        });
    }
    Ok(json(&EmbeddingList {
        object: "list",
        data,
        model: name,
        usage: Usage {
            prompt_tokens: 0,
            total_tokens: 0,
        },
    }))
}

/// The texts: a string or a list of strings (token lists are refused).
fn take_texts(body: &mut Body) -> OpenAiResult<Vec<String>> {
    let refuse = |why: &str| Err(OpenAiError::invalid(Some("input"), why));
    match body.take("input") {
        Some(Value::String(text)) => Ok(vec![text]),
        Some(Value::Array(texts)) if !texts.is_empty() => texts
            .into_iter()
            .map(|text| match text {
                Value::String(text) => Ok(text),
                _ => Err(OpenAiError::invalid(
                    Some("input"),
                    "'input' must hold strings (token lists need the model's tokenizer)",
                )),
            })
            .collect(),
        Some(Value::Array(_)) => refuse("'input' must hold at least one string"),
        Some(_) => refuse("'input' must be a string or a list of strings"),
        None => refuse("'input' is a required property"),
    }
}

/// The model's text input and vector output: it must have one BYTES input
/// and one FP32 or FP64 output.
fn signature<'a>(name: &str, metadata: &'a ModelMetadata) -> OpenAiResult<(&'a str, &'a str)> {
    match (metadata.inputs.as_slice(), metadata.outputs.as_slice()) {
        ([input], [output])
            if input.datatype == "BYTES" && matches!(output.datatype.as_str(), "FP32" | "FP64") =>
        {
            Ok((&input.name, &output.name))
        }
        _ => Err(OpenAiError::invalid(
            Some("model"),
            format!(
                "model '{name}' cannot make embeddings: it needs one BYTES input and one FP32 \
                 or FP64 output, it has inputs [{}] and outputs [{}]",
                describe(&metadata.inputs),
                describe(&metadata.outputs)
            ),
        )),
    }
}

/// `NAME DATATYPE, ...`.
fn describe(tensors: &[TensorMetadata]) -> String {
    let described: Vec<String> = tensors
        .iter()
        .map(|t| format!("{} {}", t.name, t.datatype))
        .collect();
    described.join(", ")
}

/// The elements of `output` in `response`, as FP32 numbers.
fn vector(response: &InferResponse, output: &str) -> Result<Vec<f32>, Error> {
    let tensor = response
        .outputs
        .iter()
        .find(|tensor| tensor.name == output)
        .ok_or_else(|| {
            Error::internal(format!(
                "model '{}' sent no output '{output}'",
                response.model_name
            ))
        })?;
    let data = &tensor.data;
    Ok(match tensor.datatype {
        DataType::Fp32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        DataType::Fp64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        other => {
            return Err(Error::internal(format!(
                "output '{output}' is {}, not FP32 or FP64",
                other.wire_name()
            )));
        }
    })
}

/// Base64 of the little-endian bytes of `floats`.
fn to_base64(floats: &[f32]) -> String {
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use oxiserve_types::Tensor;
    use serde_json::json;

    use super::*;

    fn tensor(name: &str, datatype: &str) -> TensorMetadata {
        TensorMetadata {
            name: name.into(),
            datatype: datatype.into(),
            shape: vec![-1, 1],
        }
    }

    fn metadata(inputs: Vec<TensorMetadata>, outputs: Vec<TensorMetadata>) -> ModelMetadata {
        ModelMetadata {
            name: "m".into(),
            versions: Vec::new(),
            platform: String::new(),
            inputs,
            outputs,
        }
    }

    #[test]
    fn models_need_one_text_input_and_one_float_output() {
        let good = metadata(vec![tensor("text", "BYTES")], vec![tensor("vec", "FP32")]);
        assert_eq!(signature("m", &good).unwrap(), ("text", "vec"));
        let bad = metadata(vec![tensor("text", "BYTES")], vec![tensor("out", "BYTES")]);
        let error = signature("m", &bad).unwrap_err();
        assert!(
            error
                .message
                .ends_with("inputs [text BYTES] and outputs [out BYTES]"),
            "{}",
            error.message
        );
    }

    #[test]
    fn texts_are_strings() {
        let texts =
            |json: Value| take_texts(&mut Body::parse(json.to_string().as_bytes()).unwrap());
        assert_eq!(texts(json!({"input": "a"})).unwrap(), ["a"]);
        assert_eq!(texts(json!({"input": ["a", "b"]})).unwrap(), ["a", "b"]);
        for bad in [
            json!({}),
            json!({"input": []}),
            json!({"input": [[1, 2]]}),
            json!({"input": 1}),
        ] {
            assert_eq!(
                texts(bad.clone()).unwrap_err().param.as_deref(),
                Some("input"),
                "{bad}"
            );
        }
    }

    #[test]
    fn vectors_are_fp32_as_numbers_or_base64() {
        let data: Vec<u8> = [0.5f64, -2.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let response = InferResponse {
            outputs: vec![Tensor::new(
                "vec",
                DataType::Fp64,
                vec![2],
                Bytes::from(data),
            )],
            ..Default::default()
        };
        let floats = vector(&response, "vec").unwrap();
        assert_eq!(floats, [0.5, -2.0]);
        assert_eq!(to_base64(&floats), "AAAAPwAAAMA=");
        assert!(vector(&response, "other").is_err());
        // Numbers keep FP32's shortest form.
        let json = serde_json::to_string(&Vector::Floats(vec![0.1])).unwrap();
        assert_eq!(json, "[0.1]");
    }
}
