//! KServe v2 JSON and binary tensor data: HTTP bodies <-> core types.
//!
//! Pure functions, no I/O: [`decode_infer_request`] turns the body of
//! `POST /v2/models/{model}[/versions/{version}]/infer` into an
//! [`InferRequest`](oxiserve_types::InferRequest), and
//! [`encode_infer_response`] turns an
//! [`InferResponse`](oxiserve_types::InferResponse) into the response body,
//! both with Triton's binary tensor data extension and matching Triton 2.51's
//! output byte for byte (member order, number formatting, error texts).

mod dtoa;
mod generate;
mod header;
mod json_data;
mod json_write;
mod parameters;
mod raw;
mod request;
mod response;
mod special_literals;

#[cfg(test)]
mod tests;

pub use generate::{decode_generate_request, encode_generate_response};
pub use raw::decode_raw_request;
pub use request::{decode_infer_request, is_raw_binary_request};
pub use response::{EncodedResponse, encode_infer_response};
