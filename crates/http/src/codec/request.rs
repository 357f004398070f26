//! Decoding `POST /v2/models/{model}[/versions/{version}]/infer` bodies: the
//! JSON request header and the binary tensor data after it (Triton's binary
//! tensor data extension).

use std::fmt::Display;

use bytes::Bytes;
use oxiserve_types::{
    DataType, Error, InferRequest, ParameterValue, Parameters, RequestedOutput, Tensor,
    element_count, format_shape,
};
use serde_json::Value;
use serde_json::value::RawValue;

use super::header::{Decoder, InputData, InputHeader, RequestHeader, parse_header, parse_shape};
use super::json_data::{DataTarget, read_json_data};
use super::parameters::{self, invalid_type_message};
use super::special_literals;

/// Whether Triton would take this body as a raw binary request: an
/// `Inference-Header-Content-Length` of 0, or an empty body without that
/// header. Triton then feeds the whole body to the model's only input (named
/// `raw_input` in its messages) and returns every output as binary data.
/// [`decode_infer_request`] refuses such requests: the input's name, datatype
/// and shape come from the model configuration, which the codec does not see.
pub fn is_raw_binary_request(body_len: usize, header_length: Option<usize>) -> bool {
    match header_length {
        Some(length) => length == 0,
        None => body_len == 0,
    }
}

/// Decodes the body of `POST /v2/models/{model}[/versions/{version}]/infer`.
///
/// `header_length` is the value of the `Inference-Header-Content-Length`
/// header when the request has one: the first `header_length` bytes of `body`
/// are then the JSON header and the rest is binary tensor data. Each input
/// whose parameters have `binary_data_size` takes that many bytes of the
/// binary data, in input order, as a slice of `body` (no copy). Inputs with
/// JSON `data` are parsed into new buffers, checked against their datatype
/// and shape.
///
/// Errors carry the kind Triton 2.51 gives them, so that mapping kinds to
/// HTTP statuses gives Triton's statuses: JSON syntax errors and JSON type
/// errors (`Unable to parse ...`, a wrong element type, a `data` count that
/// does not fit the shape) are [`ErrorKind::Internal`] (500 in Triton);
/// the other request errors are [`ErrorKind::InvalidArg`] (400); raw binary
/// requests are left to [`decode_raw_request`](super::decode_raw_request) (see
/// [`is_raw_binary_request`]).
///
/// Inputs and outputs in shared memory keep their `shared_memory_region`,
/// `shared_memory_byte_size` and `shared_memory_offset` parameters (type
/// checked here, as Triton's parser does) and have no data: the core reads
/// and writes the regions.
///
/// [`ErrorKind::Internal`]: oxiserve_types::ErrorKind::Internal
/// [`ErrorKind::InvalidArg`]: oxiserve_types::ErrorKind::InvalidArg
pub fn decode_infer_request(
    model_name: &str,
    model_version: Option<i64>,
    body: Bytes,
    header_length: Option<usize>,
) -> Result<InferRequest, Error> {
    if is_raw_binary_request(body.len(), header_length) {
        return Err(Error::invalid_arg(format!(
            "a raw binary request for model '{model_name}' needs the model's configuration: \
             decode it with decode_raw_request"
        )));
    }
    let json_length = match header_length {
        Some(length) if length > body.len() => {
            return Err(Error::invalid_arg(format!(
                "inference header size should be in range (0, {}), got: {length}",
                body.len()
            )));
        }
        Some(length) => length,
        None => body.len(),
    };
    let json = &body[..json_length];
    let no_header_length = header_length.is_none() && !body.is_empty();
    let mut binary = BinarySection {
        body: &body,
        offset: json_length,
        header_given: header_length.is_some(),
        model_name,
    };
    let mut decoder = Decoder {
        model_name,
        specials: false,
    };
    let header = match parse_header(json, &decoder) {
        Ok(header) => header,
        Err(err) => {
            // The slow path: NaN and infinity literals, which serde_json
            // refuses, become placeholder strings in a copy of the header.
            let rewritten = match err.classify() {
                serde_json::error::Category::Syntax => special_literals::rewrite(json),
                _ => None,
            };
            let Some(rewritten) = rewritten else {
                return Err(header_parse_error(&err, no_header_length));
            };
            decoder.specials = true;
            let header = parse_header(&rewritten, &decoder)
                .map_err(|err| header_parse_error(&err, no_header_length))?;
            return decoder.decode(header, model_version, &mut binary);
        }
    };
    decoder.decode(header, model_version, &mut binary)
}

impl Decoder<'_> {
    fn decode(
        &self,
        header: RequestHeader<'_>,
        model_version: Option<i64>,
        binary: &mut BinarySection<'_>,
    ) -> Result<InferRequest, Error> {
        let mut request = InferRequest {
            model_name: self.model_name.to_string(),
            model_version,
            ..InferRequest::default()
        };
        if let Some(id) = header.id {
            request.id = self.string(id).ok_or_else(|| {
                Error::internal("Unable to parse 'id': attempt to access JSON non-string as string")
            })?;
        }
        if let Some(raw) = header.parameters {
            request.parameters = request_parameters(raw, self.specials)?;
        }
        let Some(inputs) = header.inputs else {
            return Err(Error::internal(
                "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
            ));
        };
        request.inputs = inputs
            .0
            .into_iter()
            .enumerate()
            .map(|(index, input)| decode_input(self, index, input, binary))
            .collect::<Result<_, _>>()?;
        binary.finish()?;
        if let Some(raw) = header.outputs {
            request.outputs = decode_outputs(self, raw)?;
        }
        Ok(request)
    }
}

/// The error for a header that does not parse.
pub(super) fn header_parse_error(err: &serde_json::Error, no_header_length: bool) -> Error {
    use serde_json::error::Category;
    match err.classify() {
        Category::Data => Error::internal(format!("Unable to parse the request JSON: {err}")),
        Category::Syntax | Category::Eof | Category::Io => {
            let hint = if no_header_length && err.to_string().starts_with("trailing characters") {
                " (a body with binary tensor data needs the Inference-Header-Content-Length \
                 header)"
            } else {
                ""
            };
            Error::internal(format!(
                "failed to parse the request JSON buffer: {err}{hint}"
            ))
        }
    }
}

/// Request parameters, typed as Triton requires for the ones it interprets.
fn request_parameters(raw: &RawValue, specials: bool) -> Result<Parameters, Error> {
    let object = parameters::parse_object(raw, "the request")?;
    for (key, value) in &object {
        // RapidJSON's words for the type Triton requires.
        let wanted = match key.as_str() {
            "sequence_id" if !(value.is_u64() || value.is_string()) => {
                "non-unsigned-integer as unsigned-integer or string"
            }
            "sequence_start" | "sequence_end" | "binary_data_output" if !value.is_boolean() => {
                "non-boolean as boolean"
            }
            "priority" | "timeout" if !value.is_u64() => "non-unsigned-integer as unsigned-integer",
            _ if key.starts_with("triton_") => {
                return Err(Error::invalid_arg(
                    "parameter keys starting with 'triton_' are reserved for Triton usage and \
                     should not be specified.",
                ));
            }
            _ => continue,
        };
        return Err(Error::internal(format!(
            "Unable to parse '{key}': attempt to access JSON {wanted}"
        )));
    }
    parameters::collect(object, specials, |key| {
        Err(Error::invalid_arg(invalid_type_message(key)))
    })
}

/// The binary data after the JSON header, handed out input by input.
struct BinarySection<'a> {
    body: &'a Bytes,
    /// Where the next input's bytes start.
    offset: usize,
    header_given: bool,
    model_name: &'a str,
}

impl BinarySection<'_> {
    /// The next `size` bytes for input `name`, as a slice of the body.
    fn take(&mut self, name: &str, size: usize) -> Result<Bytes, Error> {
        if size == 0 {
            return Ok(Bytes::new());
        }
        let available = self.body.len() - self.offset;
        if size > available {
            let hint = if self.header_given {
                ""
            } else {
                " (binary tensor data needs the Inference-Header-Content-Length header)"
            };
            return Err(Error::invalid_arg(format!(
                "unexpected size for input '{name}', expecting {} additional bytes for model \
                 '{}'{hint}",
                size - available,
                self.model_name
            )));
        }
        let data = self.body.slice(self.offset..self.offset + size);
        self.offset += size;
        Ok(data)
    }

    /// Checks that the inputs used all the binary data.
    fn finish(&self) -> Result<(), Error> {
        let left = self.body.len() - self.offset;
        if left > 0 {
            return Err(Error::invalid_arg(format!(
                "unexpected additional input data for model '{}': {left} bytes after the last \
                 input's binary data",
                self.model_name
            )));
        }
        Ok(())
    }
}

fn decode_input(
    decoder: &Decoder<'_>,
    index: usize,
    input: InputHeader<'_>,
    binary: &mut BinarySection<'_>,
) -> Result<Tensor, Error> {
    let name = match input.name {
        Some(raw) => decoder.string(raw).ok_or_else(|| {
            Error::internal(format!(
                "Unable to parse 'name' of input {index}: attempt to access JSON non-string as \
                 string"
            ))
        })?,
        None => {
            return Err(Error::internal(format!(
                "Unable to parse 'name' of input {index}: attempt to access non-existing object \
                 member 'name'"
            )));
        }
    };
    let missing = |member: &str| {
        Error::internal(format!(
            "Unable to parse '{member}' of input '{name}': attempt to access non-existing object \
             member '{member}'"
        ))
    };

    // Where the data is: parameters first, as they say whether it is binary.
    let mut binary_size = None;
    let mut shm_region = None;
    let mut tensor_parameters = Parameters::new();
    if let Some(raw) = input.parameters {
        let mut object = parameters::parse_object(raw, format_args!("input '{name}'"))?;
        if let Some(size) = object.remove("binary_data_size") {
            binary_size = Some(size.as_u64().ok_or_else(|| {
                Error::internal(format!(
                    "Unable to parse 'binary_data_size' of input '{name}': attempt to access \
                     JSON non-unsigned-integer as unsigned-integer"
                ))
            })?);
        }
        if let Some(region) = object.remove("shared_memory_region") {
            shm_region = Some(match region {
                Value::String(region) => region,
                _ => {
                    return Err(Error::internal(format!(
                        "Unable to parse 'shared_memory_region' of input '{name}': attempt to \
                         access JSON non-string as string"
                    )));
                }
            });
        }
        let shm_numbers = shared_memory_numbers(&mut object, format_args!("input '{name}'"))?;
        // Triton ignores other input parameters; values of other JSON types
        // are dropped rather than refused.
        tensor_parameters = parameters::collect(object, decoder.specials, |_| Ok(()))?;
        if let Some(region) = &shm_region {
            tensor_parameters.insert(
                "shared_memory_region".into(),
                ParameterValue::String(region.clone()),
            );
            tensor_parameters.extend(shm_numbers);
        }
    }
    let sources = [
        (input.data.is_some(), "'data'"),
        (binary_size.is_some(), "'binary_data_size'"),
        (shm_region.is_some(), "'shared_memory_region'"),
    ];
    if sources.iter().filter(|(set, _)| *set).count() != 1 {
        let set: Vec<&str> = sources
            .iter()
            .filter(|(set, _)| *set)
            .map(|(_, what)| *what)
            .collect();
        let but = if set.is_empty() {
            "no field is set".to_string()
        } else {
            format!("set {}", set.join(" "))
        };
        return Err(Error::invalid_arg(format!(
            "Input '{name}' must set only one of the following fields: 'data', \
             'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But \
             {but}"
        )));
    }

    let datatype_name = match input.datatype {
        Some(raw) => decoder.string(raw).ok_or_else(|| {
            Error::internal(format!(
                "Unable to parse 'datatype' of input '{name}': attempt to access JSON non-string \
                 as string"
            ))
        })?,
        None => return Err(missing("datatype")),
    };
    let Some(datatype) = DataType::from_wire_name(&datatype_name) else {
        return Err(Error::invalid_arg(format!(
            "invalid datatype for input {name}"
        )));
    };
    let shape = match input.shape {
        Some(raw) => parse_shape(raw).ok_or_else(|| {
            Error::internal(format!(
                "Unable to parse 'shape' of input '{name}': expected an array of non-negative \
                 integers, got {}",
                excerpt(raw.get())
            ))
        })?,
        None => return Err(missing("shape")),
    };

    let data = if let Some(size) = binary_size {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        binary.take(&name, size)?
    } else if shm_region.is_some() {
        // The core reads it from the region.
        Bytes::new()
    } else {
        let data = input.data.expect("checked above");
        let Some(expected) = element_count(&shape) else {
            return Err(Error::invalid_arg(format!(
                "invalid shape for input '{name}': shape {} causes total element count to \
                 exceed maximum size of {}",
                format_shape(&shape),
                i64::MAX
            )));
        };
        match data {
            // Triton does not look at the data of an empty tensor.
            _ if expected == 0 => Bytes::new(),
            InputData::Parsed(parsed) => Bytes::from(parsed?),
            InputData::Raw(raw) => {
                let target = DataTarget {
                    model: decoder.model_name,
                    name: &name,
                    datatype,
                    expected,
                    specials: decoder.specials,
                    json_len: raw.get().len(),
                };
                Bytes::from(read_json_data(&target, raw.get())?)
            }
        }
    };
    Ok(Tensor {
        name,
        datatype,
        shape,
        data,
        parameters: tensor_parameters,
    })
}

/// The start of a JSON text, for messages.
fn excerpt(text: &str) -> String {
    const MAX: usize = 64;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

fn decode_outputs(decoder: &Decoder<'_>, raw: &RawValue) -> Result<Vec<RequestedOutput>, Error> {
    let outputs: Vec<&RawValue> = serde_json::from_str(raw.get()).map_err(|_| {
        Error::internal("Unable to parse 'outputs': attempt to access JSON non-array as array")
    })?;
    outputs
        .into_iter()
        .enumerate()
        .map(|(index, raw)| decode_output(decoder, index, raw))
        .collect()
}

fn decode_output(
    decoder: &Decoder<'_>,
    index: usize,
    raw: &RawValue,
) -> Result<RequestedOutput, Error> {
    let mut object: serde_json::Map<String, Value> =
        serde_json::from_str(raw.get()).map_err(|_| {
            Error::internal(format!(
                "Unable to parse 'outputs': output {index} is not a JSON object"
            ))
        })?;
    let name = match object.remove("name").map(|name| match name {
        Value::String(name) => decoder.plain(name),
        _ => None,
    }) {
        Some(Some(name)) => name,
        Some(None) => {
            return Err(Error::internal(format!(
                "Unable to parse 'name' of output {index}: attempt to access JSON non-string as \
                 string"
            )));
        }
        None => {
            return Err(Error::internal(format!(
                "Unable to parse 'name' of output {index}: attempt to access non-existing object \
                 member 'name'"
            )));
        }
    };
    let mut output = RequestedOutput {
        name,
        ..RequestedOutput::default()
    };
    let object = match object.remove("parameters") {
        None => return Ok(output),
        Some(Value::Object(object)) => object,
        Some(_) => {
            return Err(Error::internal(format!(
                "Unable to parse 'parameters' of output '{}': expected an object",
                output.name
            )));
        }
    };
    if let Some(binary) = object.get("binary_data")
        && !binary.is_boolean()
    {
        return Err(Error::internal(format!(
            "Unable to parse 'binary_data' of output '{}': attempt to access JSON non-boolean as \
             boolean",
            output.name
        )));
    }
    if let Some(classes) = object.get("classification") {
        let classes = classes.as_u64().ok_or_else(|| {
            Error::internal(format!(
                "Unable to set 'classification' of output '{}': attempt to access JSON \
                 non-unsigned-integer as unsigned-integer",
                output.name
            ))
        })?;
        output.class_count = u32::try_from(classes).unwrap_or(u32::MAX);
    }
    let mut object = object;
    if let Some(region) = object.get("shared_memory_region") {
        if !region.is_string() {
            return Err(Error::internal(format!(
                "Unable to parse 'shared_memory_region' of output '{}': attempt to access JSON \
                 non-string as string",
                output.name
            )));
        }
        if object.get("binary_data") == Some(&Value::Bool(true)) {
            return Err(Error::invalid_arg(
                "Output can't set both 'shared_memory_region' and 'binary_data'",
            ));
        }
        let numbers = shared_memory_numbers(&mut object, format_args!("output '{}'", output.name))?;
        output.parameters.extend(numbers);
    }
    // Triton ignores other output parameters; values of other JSON types are
    // dropped rather than refused.
    let others = parameters::collect(object, decoder.specials, |_| Ok(()))?;
    output.parameters.extend(others);
    Ok(output)
}

/// Takes `shared_memory_byte_size` and `shared_memory_offset` out of a
/// tensor's parameters, as unsigned integers (Triton's 500 otherwise).
fn shared_memory_numbers(
    object: &mut serde_json::Map<String, Value>,
    tensor: impl Display,
) -> Result<Parameters, Error> {
    let mut numbers = Parameters::new();
    for key in ["shared_memory_byte_size", "shared_memory_offset"] {
        let Some(value) = object.remove(key) else {
            continue;
        };
        let number = value.as_u64().ok_or_else(|| {
            Error::internal(format!(
                "Unable to parse '{key}' of {tensor}: attempt to access JSON \
                 non-unsigned-integer as unsigned-integer"
            ))
        })?;
        numbers.insert(key.to_string(), ParameterValue::Uint(number));
    }
    Ok(numbers)
}

/// Whether output `name` goes back as binary data: its `binary_data`
/// parameter if the request names it, else the request's
/// `binary_data_output`, else not. (A named output without `binary_data` is
/// JSON even with `binary_data_output: true`, as in Triton.)
pub(crate) fn wants_binary(request: &InferRequest, name: &str) -> bool {
    let flag = |parameters: &Parameters, key: &str| {
        matches!(parameters.get(key), Some(ParameterValue::Bool(true)))
    };
    match request.outputs.iter().find(|o| o.name == name) {
        Some(output) => flag(&output.parameters, "binary_data"),
        None => flag(&request.parameters, "binary_data_output"),
    }
}
