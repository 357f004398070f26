//! Encoding inference responses: the JSON body, with Triton's binary tensor
//! data extension for the outputs asked for as binary.

use bytes::Bytes;
use oxiserve_types::{Error, InferRequest, InferResponse, Tensor, element_count};

use super::json_data::write_json_data;
use super::json_write::{write_i64, write_key, write_string, write_u64};
use super::parameters::write_parameters;
use super::request::wants_binary;

/// An encoded inference response: the body is `json` followed by each of
/// `binary`, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedResponse {
    /// The JSON part.
    pub json: Bytes,
    /// The binary outputs' data, in output order, to send after `json`.
    /// Outputs with no bytes have no chunk (as in Triton).
    pub binary: Vec<Bytes>,
    /// `Some(json.len())` when `binary` is not empty: the value of the
    /// `Inference-Header-Content-Length` response header.
    pub header_length: Option<usize>,
}

impl EncodedResponse {
    /// The length of the whole body.
    pub fn body_len(&self) -> usize {
        self.json.len() + self.binary.iter().map(Bytes::len).sum::<usize>()
    }

    /// The `Content-Type` Triton sends with this body:
    /// `application/octet-stream` with binary data, else `application/json`.
    pub fn content_type(&self) -> &'static str {
        if self.binary.is_empty() {
            "application/json"
        } else {
            "application/octet-stream"
        }
    }

    /// The body's chunks in order: `json`, then the binary chunks (no copy).
    pub fn into_chunks(self) -> impl Iterator<Item = Bytes> {
        std::iter::once(self.json).chain(self.binary)
    }
}

/// Encodes `response` to the request `request` as Triton 2.51 does, member
/// for member:
/// `{"id"?,"model_name","model_version","parameters"?,"outputs":[...]}`,
/// with `id` only when not empty, `model_version` as a string, `parameters`
/// only when there are some, and each output as
/// `{"name","datatype","shape","data":[...]}` or, when sent as binary,
/// `{"name","datatype","shape","parameters":{"binary_data_size":N}}`.
/// An output the core wrote into a shared memory region (its parameters
/// name a `shared_memory_region`) is `{"name","datatype","shape"}` only, as
/// in Triton.
///
/// An output is binary if the request names it with `"binary_data": true`;
/// an output the request does not name is binary if the request has
/// `"binary_data_output": true`. Classification outputs arrive converted
/// (BYTES) from the core and are encoded like any other output.
///
/// Errors: an FP16 or BF16 output asked for as JSON (invalid argument, as in
/// Triton); an output whose data does not fit its shape (internal).
pub fn encode_infer_response(
    response: &InferResponse,
    request: &InferRequest,
) -> Result<EncodedResponse, Error> {
    // Outputs sent as JSON reserve room for their data as they go.
    let mut json = Vec::with_capacity(128 + 96 * response.outputs.len());
    let mut binary = Vec::new();
    json.push(b'{');
    if !response.id.is_empty() {
        write_key(&mut json, "id");
        write_string(&mut json, response.id.as_bytes());
        json.push(b',');
    }
    write_key(&mut json, "model_name");
    write_string(&mut json, response.model_name.as_bytes());
    json.push(b',');
    write_key(&mut json, "model_version");
    json.push(b'"');
    write_i64(&mut json, response.model_version);
    json.push(b'"');
    if !response.parameters.is_empty() {
        json.push(b',');
        write_key(&mut json, "parameters");
        write_parameters(&mut json, &response.parameters);
    }
    json.push(b',');
    write_key(&mut json, "outputs");
    json.push(b'[');
    for (i, output) in response.outputs.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        write_output(
            &mut json,
            output,
            wants_binary(request, &output.name),
            &mut binary,
        )?;
    }
    json.extend_from_slice(b"]}");

    let header_length = (!binary.is_empty()).then_some(json.len());
    Ok(EncodedResponse {
        json: Bytes::from(json),
        binary,
        header_length,
    })
}

fn write_output(
    json: &mut Vec<u8>,
    output: &Tensor,
    as_binary: bool,
    binary: &mut Vec<Bytes>,
) -> Result<(), Error> {
    json.push(b'{');
    write_key(json, "name");
    write_string(json, output.name.as_bytes());
    json.push(b',');
    write_key(json, "datatype");
    write_string(json, output.datatype.wire_name().as_bytes());
    json.push(b',');
    write_key(json, "shape");
    json.push(b'[');
    for (i, &dim) in output.shape.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        write_i64(json, dim);
    }
    json.push(b']');
    if output.parameters.contains_key("shared_memory_region") {
        json.push(b'}');
        return Ok(());
    }
    json.push(b',');
    if as_binary {
        write_key(json, "parameters");
        json.push(b'{');
        write_key(json, "binary_data_size");
        write_u64(json, output.data.len() as u64);
        json.push(b'}');
        if !output.data.is_empty() {
            binary.push(output.data.clone());
        }
    } else {
        let Some(count) = element_count(&output.shape) else {
            return Err(Error::internal(format!(
                "output tensor shape does not match size of output for '{}'",
                output.name
            )));
        };
        write_key(json, "data");
        write_json_data(json, &output.name, output.datatype, count, &output.data)?;
    }
    json.push(b'}');
    Ok(())
}
