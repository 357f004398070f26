//! A configuration checked against the model's signature, with the
//! messages of Triton's tensorflow backend: a SavedModel's inputs and
//! outputs exactly (names, count, datatypes, shapes); a GraphDef's names
//! (its placeholders and operations) and datatypes, since it has no more.

use oxiserve_backend::signature::{
    checked_dims, compare_dims, datatype_mismatch, input_count_mismatch, require_batch_dimension,
    unexpected_tensor,
};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_sequence_batching::ControlInput},
};
use oxiserve_types::{DataType, Error, Result, format_shape};

use crate::{
    dtype,
    signature::{Signature, TensorInfo, TensorInfos, join},
};

impl Signature {
    /// Checks `config` against the model.
    pub(crate) fn check(&self, config: &ModelConfig) -> Result<()> {
        let model = &config.name;
        for input in &config.input {
            find(&self.inputs, &input.name, "input")?;
        }
        let expected = expected_input_count(config);
        if self.graph_def && self.inputs.len() < expected {
            return Err(Error::invalid_arg(format!(
                "unable to load model '{model}', configuration expects {expected} inputs, model \
                 provides at most {}",
                self.inputs.len()
            )));
        }
        if !self.graph_def && self.inputs.len() != expected {
            return Err(input_count_mismatch(model, expected, self.inputs.len()));
        }
        self.check_controls(config)?;
        let batching = BatchPlan::of(config);
        for input in &config.input {
            let info = find(&self.inputs, &input.name, "input")?;
            let dims = checked_dims(&input.dims, &input.reshape);
            if input.allow_ragged_batch {
                if info.dims.len() > 1 || info.dims.first().is_some_and(|&d| d != -1) {
                    return Err(Error::invalid_arg(format!(
                        "unable to load model '{model}', configuration expects model provides \
                         input with shape [-1] for ragged input '{}', model provides {}",
                        input.name,
                        format_shape(&info.dims)
                    )));
                }
            } else if !info.dims.is_empty() {
                compare_model_dims(model, &input.name, &info.dims, dims, batching, false)?;
            }
            check_dtype(model, "input", &input.name, input.data_type, info)?;
        }
        for output in &config.output {
            let info = find(&self.outputs, &output.name, "output")?;
            let dims = checked_dims(&output.dims, &output.reshape);
            if !info.dims.is_empty() {
                compare_model_dims(model, &output.name, &info.dims, dims, batching, true)?;
            }
            check_dtype(model, "output", &output.name, output.data_type, info)?;
        }
        Ok(())
    }

    /// Each sequence control names a model input.
    fn check_controls(&self, config: &ModelConfig) -> Result<()> {
        for control in controls(config) {
            if !self.inputs.contains_key(&control.name) {
                return Err(Error::internal(format!(
                    "configuration specified sequence control '{}', but model does not provide \
                     that input",
                    control.name
                )));
            }
        }
        Ok(())
    }
}

fn controls(config: &ModelConfig) -> &[ControlInput] {
    match &config.scheduling_choice {
        Some(SchedulingChoice::SequenceBatching(s)) => &s.control_input,
        _ => &[],
    }
}

/// The inputs the model must declare: the configured ones, batch inputs
/// and sequence controls.
fn expected_input_count(config: &ModelConfig) -> usize {
    config.input.len() + config.batch_input.len() + controls(config).len()
}

/// The tensor `name`, or Triton's message listing the allowed ones.
fn find<'a>(infos: &'a TensorInfos, name: &str, direction: &str) -> Result<&'a TensorInfo> {
    infos.get(name).ok_or_else(|| {
        let allowed: Vec<&String> = infos.keys().collect();
        unexpected_tensor(direction, name, &join(&allowed))
    })
}

fn check_dtype(
    model: &str,
    direction: &str,
    name: &str,
    data_type: i32,
    info: &TensorInfo,
) -> Result<()> {
    if DataType::from_config_number(data_type).map(dtype::to_tf) == Some(info.dtype) {
        return Ok(());
    }
    Err(datatype_mismatch(
        model,
        direction,
        name,
        data_type,
        dtype::from_tf(info.dtype),
    ))
}

/// Triton's `CompareDims`: with batching the model's first dimension must
/// be -1; a dynamic model dimension matches any configured one unless
/// `exact` (outputs).
fn compare_model_dims(
    model: &str,
    name: &str,
    model_dims: &[i64],
    dims: &[i64],
    batch: BatchPlan,
    exact: bool,
) -> Result<()> {
    require_batch_dimension(model, name, model_dims, batch)?;
    compare_dims(model, name, model_dims, dims, batch, |m, c| {
        (m == -1 && !exact) || m == c
    })
}

#[cfg(test)]
mod tests;
