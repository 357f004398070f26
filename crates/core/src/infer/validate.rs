//! Checks a request against its model's configuration, as Triton's core does
//! before scheduling: input names, datatypes, shapes (with -1, the batch
//! dimension and `max_batch_size`), byte sizes and the BYTES layout, and the
//! requested outputs. Applies `reshape` to what the backend receives.

use std::num::NonZeroU32;

use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelTensorReshape},
};
use oxiserve_types::{DataType, Error, InferRequest, Result, Tensor, element_count, format_shape};

use super::reshape::map_shape;

/// A request that passed validation.
#[derive(Debug)]
pub(crate) struct ValidRequest {
    pub request: InferRequest,
    /// The outputs to produce, by name.
    pub requested_outputs: Vec<String>,
    /// The request's batch size (1 for models without batching).
    pub batch_size: u64,
}

/// Validates `request` for the model `config`, in the order Triton checks,
/// with Triton's messages (most prefixed with the request id).
pub(crate) fn validate(config: &ModelConfig, mut request: InferRequest) -> Result<ValidRequest> {
    let model = &config.name;
    let id = &request.id;
    check_input_names(config, &request)?;
    let batch = BatchPlan::of(config);
    let batch_size = match batch.limit() {
        Some(limit) => Some(check_batch_size(config, limit, &request)?),
        None => None,
    };
    for tensor in &mut request.inputs {
        let input = config
            .input
            .iter()
            .find(|i| i.name == tensor.name)
            .expect("names checked");
        check_datatype(config, id, input, tensor)?;
        let dims = batch.item_dims(&tensor.shape);
        if !dims_match(&input.dims, dims) {
            return Err(shape_error(config, id, input, tensor));
        }
        check_byte_size(model, id, tensor)?;
        if let Some(reshape) = &input.reshape {
            apply_reshape(input, reshape, tensor, batch.is_batching());
        }
    }
    let requested_outputs = requested_outputs(config, &request)?;
    Ok(ValidRequest {
        request,
        requested_outputs,
        batch_size: batch_size.unwrap_or(1),
    })
}

/// The batch size of a batching model's request: every input's first
/// dimension, equal across inputs and at most `max_batch_size`.
fn check_batch_size(
    config: &ModelConfig,
    limit: NonZeroU32,
    request: &InferRequest,
) -> Result<u64> {
    let model = &config.name;
    let mut batch_size = None;
    for tensor in &request.inputs {
        let Some(&batch) = tensor.shape.first() else {
            let input = config
                .input
                .iter()
                .find(|i| i.name == tensor.name)
                .expect("names checked");
            return Err(shape_error(config, &request.id, input, tensor));
        };
        if *batch_size.get_or_insert(batch) != batch {
            return Err(request_error(
                &request.id,
                format!(
                    "input '{}' batch size does not match other inputs for '{model}'",
                    tensor.name
                ),
            ));
        }
        if batch > i64::from(limit.get()) {
            return Err(request_error(
                &request.id,
                format!("inference request batch-size must be <= {limit} for '{model}'"),
            ));
        }
    }
    Ok(batch_size.unwrap_or(1).max(0) as u64)
}

/// An error about the request, prefixed with its id as Triton does.
fn request_error(id: &str, message: String) -> Error {
    let id = if id.is_empty() { "<id_unknown>" } else { id };
    Error::invalid_arg(format!("[request id: {id}] {message}"))
}

fn check_input_names(config: &ModelConfig, request: &InferRequest) -> Result<()> {
    let model = &config.name;
    let total = config.input.len();
    let required = config.input.iter().filter(|i| !i.optional).count();
    let count_error = || {
        let quoted = |names: Vec<&str>| {
            let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
            names.join(",")
        };
        let missing: Vec<&str> = config
            .input
            .iter()
            .filter(|i| !i.optional && request.input(&i.name).is_none())
            .map(|i| i.name.as_str())
            .collect();
        let expected = if required == total {
            format!("{total} inputs")
        } else {
            format!("number of inputs between {required} and {total}")
        };
        request_error(
            &request.id,
            format!(
                "expected {expected} but got {} inputs for model '{model}'. Got input(s) [{}], but missing required input(s) [{}]. Please provide all required input(s).",
                request.inputs.len(),
                quoted(request.inputs.iter().map(|t| t.name.as_str()).collect()),
                quoted(missing),
            ),
        )
    };
    if request.inputs.len() < required || request.inputs.len() > total {
        return Err(count_error());
    }
    for (i, tensor) in request.inputs.iter().enumerate() {
        if request.inputs[..i].iter().any(|t| t.name == tensor.name) {
            return Err(request_error(
                &request.id,
                format!("input '{}' already exists in request", tensor.name),
            ));
        }
        if !config.input.iter().any(|input| input.name == tensor.name) {
            return Err(Error::invalid_arg(format!(
                "unexpected inference input '{}' for model '{model}'",
                tensor.name
            )));
        }
    }
    if config
        .input
        .iter()
        .any(|i| !i.optional && request.input(&i.name).is_none())
    {
        return Err(count_error());
    }
    Ok(())
}

fn check_datatype(
    config: &ModelConfig,
    id: &str,
    input: &ModelInput,
    tensor: &Tensor,
) -> Result<()> {
    let expected = DataType::from_config_number(input.data_type);
    if expected == Some(tensor.datatype) {
        return Ok(());
    }
    let expected = expected.map_or("INVALID", DataType::wire_name);
    Err(request_error(
        id,
        format!(
            "inference input '{}' data-type is '{}', but model '{}' expects '{expected}'",
            tensor.name, tensor.datatype, config.name
        ),
    ))
}

/// Whether `shape` fits `dims`, where -1 in `dims` matches any size.
fn dims_match(dims: &[i64], shape: &[i64]) -> bool {
    dims.len() == shape.len()
        && dims
            .iter()
            .zip(shape)
            .all(|(&d, &s)| s >= 0 && (d == -1 || d == s))
}

fn shape_error(config: &ModelConfig, id: &str, input: &ModelInput, tensor: &Tensor) -> Error {
    let batch = BatchPlan::of(config);
    let expected = batch.full_shape(&input.dims);
    let note = if batch.is_batching() { BATCH_NOTE } else { "" };
    request_error(
        id,
        format!(
            "unexpected shape for input '{}' for model '{}'. Expected {}, got {}. {note}",
            tensor.name,
            config.name,
            format_shape(&expected),
            format_shape(&tensor.shape)
        ),
    )
}

/// What Triton adds to shape errors of batching models.
const BATCH_NOTE: &str = "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.";

fn check_byte_size(model: &str, id: &str, tensor: &Tensor) -> Result<()> {
    let elements = element_count(&tensor.shape).ok_or_else(|| {
        Error::invalid_arg(format!(
            "input '{}' has an invalid shape {}",
            tensor.name,
            format_shape(&tensor.shape)
        ))
    })?;
    match tensor.datatype.element_size() {
        Some(size) => {
            let expected = elements.saturating_mul(size);
            if tensor.data.len() != expected {
                return Err(request_error(
                    id,
                    format!(
                        "input byte size mismatch for input '{}' for model '{model}'. Expected {expected}, got {}",
                        tensor.name,
                        tensor.data.len()
                    ),
                ));
            }
            Ok(())
        }
        None => check_bytes_layout(model, id, tensor, elements),
    }
}

/// Checks a BYTES tensor's layout: each element a 4-byte length and that many bytes.
fn check_bytes_layout(model: &str, id: &str, tensor: &Tensor, expected: usize) -> Result<()> {
    let name = &tensor.name;
    let mut rest = &tensor.data[..];
    let mut count = 0usize;
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(request_error(
                id,
                format!(
                    "incomplete string length indicator for inference input '{name}' for model '{model}', expecting 4 bytes but only {} bytes available. Please make sure the string length indicator is in one buffer.",
                    rest.len()
                ),
            ));
        };
        let len = u32::from_le_bytes(*len) as usize;
        if len > tail.len() {
            return Err(Error::invalid_arg(format!(
                "incomplete string data for inference input '{name}', expecting string of length {len} but only {} bytes available",
                tail.len()
            )));
        }
        rest = &tail[len..];
        count += 1;
        if count > expected {
            return Err(request_error(
                id,
                format!(
                    "unexpected number of string elements {count} for inference input '{name}' for model '{model}', expecting {expected}"
                ),
            ));
        }
    }
    if count != expected {
        return Err(request_error(
            id,
            format!(
                "expected {expected} string elements for inference input '{name}' for model '{model}', got {count}"
            ),
        ));
    }
    Ok(())
}

/// Gives the backend the configured `reshape` shape (after the batch dimension).
fn apply_reshape(
    input: &ModelInput,
    reshape: &ModelTensorReshape,
    tensor: &mut Tensor,
    batching: bool,
) {
    let split = usize::from(batching);
    let mut shape = tensor.shape[..split].to_vec();
    shape.extend(map_shape(
        &input.dims,
        &tensor.shape[split..],
        &reshape.shape,
    ));
    tensor.shape = shape;
}

fn requested_outputs(config: &ModelConfig, request: &InferRequest) -> Result<Vec<String>> {
    if request.outputs.is_empty() {
        return Ok(config.output.iter().map(|o| o.name.clone()).collect());
    }
    let mut names = Vec::with_capacity(request.outputs.len());
    for output in &request.outputs {
        if !config.output.iter().any(|o| o.name == output.name) {
            return Err(Error::invalid_arg(format!(
                "unexpected inference output '{}' for model '{}'",
                output.name, config.name
            )));
        }
        if !names.contains(&output.name) {
            names.push(output.name.clone());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
