//! A model's real inputs and outputs, checked against its configuration and
//! used to auto-complete it, with the messages of Triton's onnxruntime backend.

use std::collections::BTreeMap;

use ort::{
    session::Session,
    value::{TensorElementType, ValueType},
};
use oxiserve_backend::signature::{
    CompletedTensor, checked_dims, compare_dims, complete_batching, datatype_mismatch,
    input_count_mismatch, require_batch_dimension, unexpected_tensor,
};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};
use oxiserve_types::{DataType, Error, Result, format_shape};

use crate::dtype;

/// One input or output as the model declares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorInfo {
    pub dtype: TensorElementType,
    /// `-1` for a dynamic dimension.
    pub dims: Vec<i64>,
}

/// Tensors by name (sorted, as Triton lists them in messages).
pub(crate) type TensorInfos = BTreeMap<String, TensorInfo>;

/// The model's signature.
#[derive(Debug, Clone, Default)]
pub(crate) struct Signature {
    pub inputs: TensorInfos,
    /// Initializers a request may override; allowed as inputs.
    pub overridable: TensorInfos,
    pub outputs: TensorInfos,
}

impl Signature {
    /// Reads the signature of a session; non-tensor inputs or outputs
    /// (sequences, maps) are refused.
    pub(crate) fn of(session: &Session, model: &str) -> Result<Self> {
        let infos = |outlets: Vec<(&str, &ValueType)>| -> Result<TensorInfos> {
            outlets
                .into_iter()
                .map(|(name, value)| match value {
                    ValueType::Tensor { ty, shape, .. } => Ok((
                        name.to_string(),
                        TensorInfo {
                            dtype: *ty,
                            dims: shape.to_vec(),
                        },
                    )),
                    other => Err(Error::invalid_arg(format!(
                        "unable to load model '{model}', tensor '{name}' is a {other}, \
                         only tensors are supported"
                    ))),
                })
                .collect()
        };
        let overridable = session.overridable_initializers();
        Ok(Self {
            inputs: infos(
                session
                    .inputs()
                    .iter()
                    .map(|o| (o.name(), o.dtype()))
                    .collect(),
            )?,
            overridable: infos(overridable.iter().map(|o| (o.name(), o.dtype())).collect())?,
            outputs: infos(
                session
                    .outputs()
                    .iter()
                    .map(|o| (o.name(), o.dtype()))
                    .collect(),
            )?,
        })
    }

    /// Checks `config` against the model: counts, names, datatypes and shapes.
    pub(crate) fn check(&self, config: &ModelConfig) -> Result<()> {
        let model = &config.name;
        let expected = expected_input_count(config);
        if self.inputs.len() != expected {
            return Err(input_count_mismatch(model, expected, self.inputs.len()));
        }
        for input in &config.input {
            if input.optional && BatchPlan::of(config).is_batching() {
                return Err(Error::invalid_arg(format!(
                    "unable to load model '{model}', optional input '{}' is not supported for \
                     models that support batching",
                    input.name
                )));
            }
            let info = self
                .inputs
                .get(&input.name)
                .or_else(|| self.overridable.get(&input.name))
                .ok_or_else(|| {
                    let allowed: Vec<&str> = self
                        .inputs
                        .keys()
                        .chain(self.overridable.keys())
                        .map(String::as_str)
                        .collect();
                    unexpected_tensor("input", &input.name, &allowed.join(", "))
                })?;
            check_tensor(
                config,
                "input",
                &input.name,
                input.data_type,
                checked_dims(&input.dims, &input.reshape),
                info,
            )?;
        }
        for output in &config.output {
            let info = self.outputs.get(&output.name).ok_or_else(|| {
                let allowed: Vec<&str> = self.outputs.keys().map(String::as_str).collect();
                unexpected_tensor("output", &output.name, &allowed.join(", "))
            })?;
            check_tensor(
                config,
                "output",
                &output.name,
                output.data_type,
                checked_dims(&output.dims, &output.reshape),
                info,
            )?;
        }
        self.check_states(config)?;
        Ok(())
    }

    /// Checks that the sequence batcher's states are a model input and
    /// output of their datatype.
    fn check_states(&self, config: &ModelConfig) -> Result<()> {
        let Some(SchedulingChoice::SequenceBatching(batching)) = &config.scheduling_choice else {
            return Ok(());
        };
        for state in &batching.state {
            let dtype = DataType::from_config_number(state.data_type).map(dtype::to_onnx);
            for (direction, name, infos) in [
                ("input", &state.input_name, &self.inputs),
                ("output", &state.output_name, &self.outputs),
            ] {
                let found = infos.get(name).map(|info| info.dtype);
                if found.is_none() || found != dtype {
                    return Err(Error::invalid_arg(format!(
                        "unable to load model '{}', state {direction} '{name}' ({}) is not a model \
                         {direction}{}",
                        config.name,
                        DataType::from_config_number(state.data_type)
                            .map_or("TYPE_INVALID", DataType::config_name),
                        found.map_or(String::new(), |t| format!(
                            " of that datatype: the model provides {}",
                            dtype::config_name(t)
                        ))
                    )));
                }
            }
        }
        Ok(())
    }

    /// Triton's auto-complete: with inputs or outputs missing from `config`,
    /// fills them (and `max_batch_size`, and `dynamic_batching` when the
    /// model can batch) from the model.
    pub(crate) fn complete(
        &self,
        config: &mut ModelConfig,
        default_max_batch_size: i32,
    ) -> Result<()> {
        if !config.input.is_empty() && !config.output.is_empty() {
            log::info!(
                "skipping model configuration auto-complete for '{}': inputs and outputs already specified",
                config.name
            );
            return Ok(());
        }
        let can_batch = self
            .inputs
            .values()
            .chain(self.outputs.values())
            .all(|info| info.dims.first() == Some(&-1));
        if can_batch {
            complete_batching(config, default_max_batch_size.max(0));
        } else if config.max_batch_size != 0 {
            return Err(Error::invalid_arg(format!(
                "autofill failed for model '{}': model does not support batching while non-zero \
                 max_batch_size is specified",
                config.name
            )));
        }
        let batching = BatchPlan::of(config).is_batching();
        if config.input.is_empty() {
            config.input = (self.inputs.iter())
                .map(|(name, info)| completed(name, info, batching).input())
                .collect();
        }
        if config.output.is_empty() {
            config.output = (self.outputs.iter())
                .map(|(name, info)| completed(name, info, batching).output())
                .collect();
        }
        Ok(())
    }
}

/// The inputs the model must declare: the configured ones (less optional
/// ones), batch inputs, sequence controls and states.
fn expected_input_count(config: &ModelConfig) -> usize {
    let configured = config.input.iter().filter(|i| !i.optional).count();
    let sequence = match &config.scheduling_choice {
        Some(SchedulingChoice::SequenceBatching(s)) => s.control_input.len() + s.state.len(),
        _ => 0,
    };
    configured + config.batch_input.len() + sequence
}

fn check_tensor(
    config: &ModelConfig,
    direction: &str,
    name: &str,
    data_type: i32,
    dims: &[i64],
    info: &TensorInfo,
) -> Result<()> {
    let model = &config.name;
    let configured = DataType::from_config_number(data_type);
    if configured.map(dtype::to_onnx) != Some(info.dtype) {
        return Err(datatype_mismatch(
            model,
            direction,
            name,
            data_type,
            dtype::from_onnx(info.dtype),
        ));
    }
    if info.dims.is_empty() {
        // A scalar: without batching, every configured dimension must be 1.
        if !BatchPlan::of(config).is_batching() && dims.iter().any(|&d| d != 1) {
            return Err(Error::invalid_arg(format!(
                "unable to load model '{model}', scalar tensor '{name}', should only provide 1 in \
                 the model configuration when the model doesn't support batching. Model \
                 configuration provided: {}.",
                format_shape(dims)
            )));
        }
        return Ok(());
    }
    // Triton's `CompareDimsSupported`: a dynamic model dimension matches
    // any configured one; with batching, the model's first must be -1.
    let batch = BatchPlan::of(config);
    require_batch_dimension(model, name, &info.dims, batch)?;
    compare_dims(model, name, &info.dims, dims, batch, |m, c| {
        m == -1 || m == c
    })
}

/// A model tensor as auto-complete writes it.
fn completed(name: &str, info: &TensorInfo, batching: bool) -> CompletedTensor {
    CompletedTensor::new(name, dtype::from_onnx(info.dtype), &info.dims, batching)
}

#[cfg(test)]
mod tests;
