//! Request decoding and response encoding end to end, against bodies and
//! answers captured from Triton 2.51.

use bytes::{BufMut, Bytes, BytesMut};
use oxiserve_types::{
    DataType, ErrorKind, InferRequest, InferResponse, ParameterValue, Parameters, Tensor,
    encode_bytes_elements,
};

use super::{EncodedResponse, decode_infer_request, encode_infer_response, is_raw_binary_request};

/// A JSON-only request body.
fn decode_json(body: &str) -> Result<InferRequest, oxiserve_types::Error> {
    decode_infer_request("m", None, Bytes::copy_from_slice(body.as_bytes()), None)
}

/// A body with a JSON header and binary data, and its header length.
fn binary_body(header: &str, binary: &[&[u8]]) -> (Bytes, usize) {
    let mut body = BytesMut::from(header.as_bytes());
    for chunk in binary {
        body.put_slice(chunk);
    }
    (body.freeze(), header.len())
}

fn decode_binary(header: &str, binary: &[&[u8]]) -> Result<InferRequest, oxiserve_types::Error> {
    let (body, length) = binary_body(header, binary);
    decode_infer_request("m", Some(1), body, Some(length))
}

fn message(result: Result<InferRequest, oxiserve_types::Error>) -> String {
    result.unwrap_err().message
}

fn le_f32(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The body as one buffer, as the client receives it.
fn body(encoded: &EncodedResponse) -> Vec<u8> {
    encoded.clone().into_chunks().flatten().collect()
}

fn json_text(encoded: &EncodedResponse) -> &str {
    std::str::from_utf8(&encoded.json).unwrap()
}

/// The error kind Triton 2.51 gives a message of the codec's (from its HTTP
/// status: 500 for JSON parse and JSON type errors, else 400).
fn triton_kind(message: &str) -> ErrorKind {
    if message.starts_with("Unable to parse") && !message.contains("out of range")
        || message.starts_with("Unable to set")
        || message.starts_with("failed to parse")
    {
        ErrorKind::Internal
    } else {
        ErrorKind::InvalidArg
    }
}

fn tensor(name: &str, datatype: DataType, shape: Vec<i64>, data: impl Into<Bytes>) -> Tensor {
    Tensor::new(name, datatype, shape, data.into())
}

fn response(outputs: Vec<Tensor>) -> InferResponse {
    InferResponse {
        model_name: "multi_io".into(),
        model_version: 1,
        id: String::new(),
        outputs,
        parameters: Parameters::new(),
    }
}

fn multi_io_outputs() -> Vec<Tensor> {
    vec![
        tensor(
            "OUTPUT0",
            DataType::Int64,
            vec![1, 3],
            [1i64, 2, 3]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
        tensor("OUTPUT1", DataType::Bool, vec![1, 3], vec![1u8, 0, 1]),
    ]
}

fn request_with(body: &str) -> InferRequest {
    decode_json(body).unwrap()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// One JSON `data` array per datatype that JSON carries, written as Triton
/// writes it (values at the edges of each type's range).
pub(super) const JSON_SAMPLES: [(DataType, &str); 12] = [
    (DataType::Bool, "[true,false,true]"),
    (DataType::Uint8, "[0,1,255]"),
    (DataType::Uint16, "[0,1,65535]"),
    (DataType::Uint32, "[0,1,4294967295]"),
    (DataType::Uint64, "[0,1,18446744073709551615]"),
    (DataType::Int8, "[-128,0,127]"),
    (DataType::Int16, "[-32768,0,32767]"),
    (DataType::Int32, "[-2147483648,0,2147483647]"),
    (
        DataType::Int64,
        "[-9223372036854775808,0,9223372036854775807]",
    ),
    (
        DataType::Fp32,
        "[1.5,0.10000000149011612,-3.3999999521443644e38]",
    ),
    (DataType::Fp64, "[0.1,1e300,-2.5]"),
    (DataType::Bytes, r#"["안녕하세요","hello",""]"#),
];

mod properties;
mod request_errors;
mod requests;
mod responses;
