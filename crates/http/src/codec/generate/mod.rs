//! Triton's generate extension: the flat JSON object of
//! `POST /v2/models/{model}[/versions/{version}]/generate[_stream]` <->
//! an inference request and its responses.
//!
//! A request member whose name is an input of the model becomes that input
//! (a scalar is one element, an array is flattened, the shape comes from
//! the model's metadata); every other member, and every member of the
//! reserved `parameters` object, is a request parameter. A response is one
//! flat object: `id`, `model_name`, `model_version`, the response
//! parameters and the outputs by name, an output of one element as a
//! scalar. Member order and texts are Triton 2.51's.

mod request;
mod response;

#[cfg(test)]
mod tests;

pub use request::decode_generate_request;
pub use response::encode_generate_response;
