//! KServe v2 inference with Triton's binary tensor extension: the body is a JSON header of
//! `Inference-Header-Content-Length` bytes, then each input's raw bytes (`binary_data_size` in
//! its parameters). Parses the header and echoes the bytes back as binary outputs
//! (INPUT<n> -> OUTPUT<n>): a JSON header with each output's `binary_data_size`, then the
//! bytes, the header's length in the response's `Inference-Header-Content-Length`. The
//! request must ask for binary outputs (`binary_data_output`, or `binary_data` on its
//! requested outputs), as oxiserve-perf and tritonclient with `binary_data=True` do.

use axum::{
    body::Bytes,
    http::header::CONTENT_TYPE,
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};

use crate::{
    http_answer::{HEADER_LENGTH, bad_request},
    model,
};

#[derive(Deserialize)]
struct RequestHeader {
    inputs: Vec<Input>,
    #[serde(default)]
    outputs: Vec<RequestedOutput>,
    #[serde(default)]
    parameters: RequestParameters,
}

#[derive(Deserialize)]
struct Input {
    name: String,
    datatype: String,
    shape: Vec<i64>,
    #[serde(default)]
    parameters: InputParameters,
}

#[derive(Deserialize, Default)]
struct InputParameters {
    binary_data_size: Option<usize>,
}

#[derive(Deserialize, Default)]
struct RequestParameters {
    #[serde(default)]
    binary_data_output: bool,
}

#[derive(Deserialize)]
struct RequestedOutput {
    #[serde(default)]
    parameters: OutputParameters,
}

#[derive(Deserialize, Default)]
struct OutputParameters {
    #[serde(default)]
    binary_data: bool,
}

#[derive(Serialize)]
struct ResponseHeader {
    model_name: String,
    model_version: &'static str,
    outputs: Vec<Output>,
}

#[derive(Serialize)]
struct Output {
    name: String,
    datatype: String,
    shape: Vec<i64>,
    parameters: OutputSize,
}

#[derive(Serialize)]
struct OutputSize {
    binary_data_size: usize,
}

/// Answers a binary infer request `body` for `model` whose JSON header is `header_length`
/// bytes long.
pub fn infer(model: String, header_length: usize, body: Bytes) -> Response {
    let Some(json) = body.get(..header_length) else {
        return bad_request(format!(
            "{HEADER_LENGTH} {header_length} exceeds the body's {} bytes",
            body.len()
        ));
    };
    let req: RequestHeader = match serde_json::from_slice(json) {
        Ok(req) => req,
        Err(e) => return bad_request(format!("failed to parse the request JSON header: {e}")),
    };
    if !(req.parameters.binary_data_output || req.outputs.iter().any(|o| o.parameters.binary_data))
    {
        return bad_request(
            "the ceiling answers binary inputs with binary outputs only: set the request \
             parameter binary_data_output or the outputs' binary_data"
                .into(),
        );
    }
    let data = &body[header_length..];
    let mut outputs = Vec::with_capacity(req.inputs.len());
    for input in req.inputs {
        let Some(size) = input.parameters.binary_data_size else {
            return bad_request(format!("input '{}' has no binary_data_size", input.name));
        };
        outputs.push(Output {
            name: model::output_name(&input.name),
            datatype: input.datatype,
            shape: input.shape,
            parameters: OutputSize {
                binary_data_size: size,
            },
        });
    }
    let sizes: usize = outputs.iter().map(|o| o.parameters.binary_data_size).sum();
    if sizes != data.len() {
        return bad_request(format!(
            "the inputs' binary_data_size add up to {sizes} bytes, the body holds {} after the header",
            data.len()
        ));
    }
    let header = ResponseHeader {
        model_name: model,
        model_version: "1",
        outputs,
    };
    let mut answer = serde_json::to_vec(&header).expect("a response header serializes");
    let answer_header_length = answer.len();
    answer.extend_from_slice(data);
    (
        [
            (CONTENT_TYPE, "application/octet-stream".to_string()),
            (HEADER_LENGTH, answer_header_length.to_string()),
        ],
        answer,
    )
        .into_response()
}
