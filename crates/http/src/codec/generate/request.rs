//! Decoding a generate request body into an [`InferRequest`].

use std::collections::HashSet;

use bytes::Bytes;
use oxiserve_core::TensorMetadata;
use oxiserve_types::{DataType, Error, InferRequest, Tensor};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::super::json_data::{DataTarget, read_json_data};
use super::super::parameters::{invalid_type_message, to_parameter};
use super::super::request::header_parse_error;

/// The reserved member whose members are mapped like top-level ones.
const PARAMETERS: &str = "parameters";

/// Decodes the body of a generate request to `model_name` (`model_version`
/// if given), whose inputs are `inputs` (from its metadata: full shapes, -1
/// for a variable dimension). Errors carry Triton's kinds: JSON errors are
/// internal (HTTP 500), the others invalid arguments (400).
pub fn decode_generate_request(
    model_name: &str,
    model_version: Option<i64>,
    inputs: &[TensorMetadata],
    body: &[u8],
) -> Result<InferRequest, Error> {
    let document: Box<RawValue> =
        serde_json::from_slice(body).map_err(|err| header_parse_error(&err, false))?;
    let Members(members) = serde_json::from_str(document.get())
        .map_err(|_| Error::internal("attempt to get members for non-object"))?;
    let mut request = InferRequest {
        model_name: model_name.to_string(),
        model_version,
        ..InferRequest::default()
    };
    if let Some((_, id)) = members.iter().find(|(key, _)| key == "id") {
        request.id = serde_json::from_str(id.get()).map_err(|_| {
            Error::internal("Unable to parse 'id': attempt to access JSON non-string as string")
        })?;
    }
    let mut mapper = Mapper {
        inputs,
        request,
        seen: HashSet::new(),
    };
    for (key, value) in &members {
        if key == PARAMETERS {
            mapper.nested(value)?;
        } else {
            mapper.member(key, value)?;
        }
    }
    Ok(mapper.request)
}

/// The members of a JSON object in document order, duplicates kept (a
/// duplicated input is an error, as in Triton).
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// Maps members onto the request: inputs by name, the rest as parameters.
struct Mapper<'a> {
    inputs: &'a [TensorMetadata],
    request: InferRequest,
    seen: HashSet<String>,
}

impl Mapper<'_> {
    /// The members of the reserved `parameters` object, mapped like
    /// top-level members (an input named there is an input).
    fn nested(&mut self, value: &RawValue) -> Result<(), Error> {
        if self.inputs.iter().any(|input| input.name == PARAMETERS) {
            return Err(Error::invalid_arg(format!(
                "Keyword '{PARAMETERS}' for nested schema also given as input tensor name"
            )));
        }
        let Members(members) = serde_json::from_str(value.get()).map_err(|_| {
            Error::internal(format!(
                "Expected JSON object for keyword: '{PARAMETERS}': attempt to access JSON \
                 non-object as object"
            ))
        })?;
        for (key, value) in &members {
            self.member(key, value).map_err(|e| {
                Error::new(
                    e.kind,
                    format!("Converting keyword: '{PARAMETERS}': {}", e.message),
                )
            })?;
        }
        Ok(())
    }

    fn member(&mut self, key: &str, value: &RawValue) -> Result<(), Error> {
        let Some(input) = self.inputs.iter().find(|input| input.name == key) else {
            let value: Value =
                serde_json::from_str(value.get()).map_err(|e| Error::internal(e.to_string()))?;
            let value =
                to_parameter(value).map_err(|_| Error::invalid_arg(invalid_type_message(key)))?;
            // The first of duplicated keys counts, as in Triton.
            self.request
                .parameters
                .entry(key.to_string())
                .or_insert(value);
            return Ok(());
        };
        if !self.seen.insert(key.to_string()) {
            let id = match self.request.id.as_str() {
                "" => "<id_unknown>",
                id => id,
            };
            return Err(Error::invalid_arg(format!(
                "[request id: {id}] input '{key}' already exists in request"
            )));
        }
        let tensor = input_tensor(&self.request.model_name, input, value)?;
        self.request.inputs.push(tensor);
        Ok(())
    }
}

/// The input tensor a member's value makes: a scalar is one element, an
/// array's length is the element count, spread over the input's shape.
fn input_tensor(model: &str, input: &TensorMetadata, raw: &RawValue) -> Result<Tensor, Error> {
    let name = input.name.as_str();
    let value: Value =
        serde_json::from_str(raw.get()).map_err(|e| Error::internal(e.to_string()))?;
    let Some(datatype) = DataType::from_wire_name(&input.datatype) else {
        return Err(Error::invalid_arg(format!(
            "invalid datatype for input {name}"
        )));
    };
    let count = match &value {
        Value::Array(elements) => elements.len(),
        _ => 1,
    };
    if datatype == DataType::Bytes && !leaves(&value).iter().all(|leaf| leaf.is_string()) {
        return Err(Error::internal(
            "Unable to parse JSON bytes array: attempt to access JSON non-string as string",
        ));
    }
    let shape = spread(&input.shape, count).ok_or_else(|| {
        Error::invalid_arg(format!(
            "The schema can not convert input '{name}' to tensor with proper shape"
        ))
    })?;
    check_elements(datatype, &value, count)?;
    let text = match value {
        Value::Array(_) => raw.get().to_string(),
        _ => format!("[{}]", raw.get()),
    };
    let target = DataTarget {
        model,
        name,
        datatype,
        expected: count,
        specials: false,
        json_len: text.len(),
    };
    let data = read_json_data(&target, &text)?;
    Ok(Tensor::new(name, datatype, shape, Bytes::from(data)))
}

/// `shape` with its variable dimensions set so that it holds `count`
/// elements, as Triton fills it: the fixed dimensions must divide the
/// count; the innermost variable dimension takes what is left, the other
/// variable ones are 1.
pub(super) fn spread(shape: &[i64], count: usize) -> Option<Vec<i64>> {
    let mut left = i64::try_from(count).ok()?;
    for &dim in shape.iter().rev().filter(|&&dim| dim != -1) {
        if dim <= 0 || left % dim != 0 {
            return None;
        }
        left /= dim;
    }
    let mut shape = shape.to_vec();
    for dim in shape.iter_mut().rev().filter(|dim| **dim == -1) {
        *dim = left;
        left = 1;
    }
    (left == 1).then_some(shape)
}

/// Checks the JSON types of the elements, in Triton's words: each of the
/// first `count` leaves must be of the datatype's JSON type, and there must
/// be no more leaves than `count` (BYTES elements are counted later, by the
/// shape). FP16 and BF16 are refused when the data is read.
fn check_elements(datatype: DataType, value: &Value, count: usize) -> Result<(), Error> {
    let (fits, wanted): (fn(&Value) -> bool, &str) = match datatype {
        DataType::Bool => (Value::is_boolean, "non-boolean as boolean"),
        DataType::Uint8 | DataType::Uint16 | DataType::Uint32 | DataType::Uint64 => {
            (Value::is_u64, "non-unsigned-integer as unsigned-integer")
        }
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            (Value::is_i64, "non-signed-integer as signed-integer")
        }
        DataType::Fp32 | DataType::Fp64 => (Value::is_number, "non-number as double"),
        DataType::Bytes | DataType::Fp16 | DataType::Bf16 => return Ok(()),
    };
    for (index, leaf) in leaves(value).into_iter().enumerate() {
        if index >= count {
            return Err(Error::internal(
                "Unable to parse 'data': Shape does not match true shape of 'data' field",
            ));
        }
        if !fits(leaf) {
            return Err(Error::internal(format!(
                "Unable to parse 'data': attempt to access JSON {wanted}"
            )));
        }
    }
    Ok(())
}

/// The scalars of a value, nested arrays flattened, in order.
fn leaves(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(elements) => elements.iter().flat_map(leaves).collect(),
        scalar => vec![scalar],
    }
}
