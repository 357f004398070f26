//! Checks a request against its model's configuration, as Triton's core does
//! before scheduling: input names, datatypes, shapes (with -1, the batch
//! dimension and `max_batch_size`), byte sizes and the BYTES layout, and the
//! requested outputs. Applies `reshape` to what the backend receives.

use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelTensorReshape},
};
use oxiserve_types::{
    DataType, Error, InferRequest, Result, Tensor, bytes_elements, element_count, format_shape,
};

/// A request that passed validation.
#[derive(Debug)]
pub(crate) struct ValidRequest {
    pub request: InferRequest,
    /// The outputs to produce, by name.
    pub requested_outputs: Vec<String>,
    /// The request's batch size (1 for models without batching).
    pub batch_size: u64,
}

/// Validates `request` for the model `config`; errors name the tensor and the model.
pub(crate) fn validate(config: &ModelConfig, mut request: InferRequest) -> Result<ValidRequest> {
    let model = &config.name;
    check_input_names(config, &request)?;
    let batching = config.max_batch_size > 0;
    let mut batch_size = None;
    for tensor in &mut request.inputs {
        let input = config
            .input
            .iter()
            .find(|i| i.name == tensor.name)
            .expect("names checked");
        check_datatype(model, input, tensor)?;
        let dims = if batching {
            let Some(&batch) = tensor.shape.first() else {
                return Err(shape_error(model, input, tensor, true));
            };
            if batch < 1 {
                return Err(Error::invalid_arg(format!(
                    "inference request batch-size must be >= 1 for '{model}', got {batch} for input '{}'",
                    tensor.name
                )));
            }
            if batch > i64::from(config.max_batch_size) {
                return Err(Error::invalid_arg(format!(
                    "inference request batch-size must be <= {} for '{model}'",
                    config.max_batch_size
                )));
            }
            if *batch_size.get_or_insert(batch) != batch {
                return Err(Error::invalid_arg(format!(
                    "input '{}' batch size does not match other inputs for '{model}'",
                    tensor.name
                )));
            }
            &tensor.shape[1..]
        } else {
            &tensor.shape[..]
        };
        if !dims_match(&input.dims, dims) {
            return Err(shape_error(model, input, tensor, batching));
        }
        check_byte_size(model, tensor)?;
        if let Some(reshape) = &input.reshape {
            apply_reshape(reshape, tensor, batching);
        }
    }
    let requested_outputs = requested_outputs(config, &request)?;
    Ok(ValidRequest {
        request,
        requested_outputs,
        batch_size: batch_size.unwrap_or(1) as u64,
    })
}

fn check_input_names(config: &ModelConfig, request: &InferRequest) -> Result<()> {
    let model = &config.name;
    for (i, tensor) in request.inputs.iter().enumerate() {
        if !config.input.iter().any(|input| input.name == tensor.name) {
            return Err(Error::invalid_arg(format!(
                "unexpected inference input '{}' for model '{model}'",
                tensor.name
            )));
        }
        if request.inputs[..i].iter().any(|t| t.name == tensor.name) {
            return Err(Error::invalid_arg(format!(
                "input '{}' was given more than once for model '{model}'",
                tensor.name
            )));
        }
    }
    let missing: Vec<&str> = config
        .input
        .iter()
        .filter(|i| !i.optional && request.input(&i.name).is_none())
        .map(|i| i.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let quoted = |names: Vec<&str>| {
        let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        names.join(",")
    };
    let required = config.input.iter().filter(|i| !i.optional).count();
    Err(Error::invalid_arg(format!(
        "expected {required} inputs but got {} inputs for model '{model}'. Got input(s) [{}], but missing required input(s) [{}]. Please provide all required input(s).",
        request.inputs.len(),
        quoted(request.inputs.iter().map(|t| t.name.as_str()).collect()),
        quoted(missing),
    )))
}

fn check_datatype(model: &str, input: &ModelInput, tensor: &Tensor) -> Result<()> {
    let expected = DataType::from_config_number(input.data_type);
    if expected == Some(tensor.datatype) {
        return Ok(());
    }
    let expected = expected.map_or("INVALID", DataType::wire_name);
    Err(Error::invalid_arg(format!(
        "inference input '{}' data-type is '{}', but model '{model}' expects '{expected}'",
        tensor.name, tensor.datatype
    )))
}

/// Whether `shape` fits `dims`, where -1 in `dims` matches any size.
fn dims_match(dims: &[i64], shape: &[i64]) -> bool {
    dims.len() == shape.len()
        && dims
            .iter()
            .zip(shape)
            .all(|(&d, &s)| s >= 0 && (d == -1 || d == s))
}

fn shape_error(model: &str, input: &ModelInput, tensor: &Tensor, batching: bool) -> Error {
    let mut expected = Vec::with_capacity(input.dims.len() + 1);
    if batching {
        expected.push(-1);
    }
    expected.extend(&input.dims);
    Error::invalid_arg(format!(
        "unexpected shape for input '{}' for model '{model}'. Expected {}, got {}",
        tensor.name,
        format_shape(&expected),
        format_shape(&tensor.shape)
    ))
}

fn check_byte_size(model: &str, tensor: &Tensor) -> Result<()> {
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
                return Err(Error::invalid_arg(format!(
                    "input byte size mismatch for input '{}' for model '{model}'. Expected {expected}, got {}",
                    tensor.name,
                    tensor.data.len()
                )));
            }
        }
        None => {
            bytes_elements(&tensor.name, &tensor.data, elements)?;
        }
    }
    Ok(())
}

/// Gives the backend the configured `reshape` shape (after the batch
/// dimension); a -1 in it takes the size that keeps the element count.
fn apply_reshape(reshape: &ModelTensorReshape, tensor: &mut Tensor, batching: bool) {
    let (batch, dims) = if batching {
        (tensor.shape[..1].to_vec(), &tensor.shape[1..])
    } else {
        (Vec::new(), &tensor.shape[..])
    };
    let elements = element_count(dims).unwrap_or(0) as i64;
    let known: i64 = reshape.shape.iter().filter(|&&d| d >= 0).product();
    let mut shape = batch;
    shape.extend(reshape.shape.iter().map(|&d| {
        if d >= 0 {
            d
        } else if known > 0 {
            elements / known
        } else {
            0
        }
    }));
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
#[path = "validate_tests.rs"]
mod tests;
