//! Triton's tensorflow auto-complete for SavedModels: `max_batch_size` (and
//! the dynamic batcher) when the signature and the configuration allow
//! batching, missing inputs, and the datatypes and dims of those given
//! without; all outputs when none is given. A GraphDef carries too little
//! to complete anything.

use oxiserve_backend::signature::{checked_dims, completed_dims};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput, ModelTensorReshape, model_config::SchedulingChoice},
};
use oxiserve_types::{DataType, Error, Result};

use crate::{
    dtype,
    signature::{Signature, TensorInfo},
};

/// What batching auto-complete decided.
#[derive(Clone, Copy)]
struct Batching {
    /// The signature and configuration allow a batch dimension.
    supported: bool,
}

impl Signature {
    /// Completes `config` from the signature.
    pub(crate) fn complete(
        &self,
        config: &mut ModelConfig,
        default_max_batch_size: i32,
    ) -> Result<()> {
        if self.graph_def {
            return Ok(());
        }
        let batching = self.complete_batching(config, default_max_batch_size)?;
        self.complete_inputs(config, batching)?;
        self.complete_outputs(config, batching)
    }

    fn complete_batching(
        &self,
        config: &mut ModelConfig,
        default_max_batch_size: i32,
    ) -> Result<Batching> {
        let model = config.name.clone();
        let signature_batches = self
            .inputs
            .values()
            .chain(self.outputs.values())
            .all(|info| info.dims.first().is_none_or(|&d| d == -1));
        if !signature_batches && config.max_batch_size > 0 {
            return Err(Error::internal(format!(
                "unable to autofill for '{model}', configuration specified max-batch {} but \
                 model signature does not support batching",
                config.max_batch_size
            )));
        }
        let hint = signature_batches && self.config_hints_batching(config)?;
        let supported = hint && default_max_batch_size > 0;
        if config.max_batch_size == 0 {
            config.max_batch_size = if supported { default_max_batch_size } else { 0 };
            if supported {
                log::warn!(
                    "autofilled max_batch_size to {} for model '{model}' since batching is \
                     supported but no max_batch_size is specified in model configuration. Must \
                     specify max_batch_size to utilize autofill with a larger max batch size",
                    config.max_batch_size
                );
            }
        }
        if config.max_batch_size > 1 && config.scheduling_choice.is_none() {
            config.scheduling_choice = Some(SchedulingChoice::DynamicBatching(Default::default()));
        }
        Ok(Batching { supported })
    }

    /// Whether the tensors the configuration gives suggest a batch
    /// dimension (one dimension fewer than the model's): with none given,
    /// the signature decides; a ragged input always batches.
    fn config_hints_batching(&self, config: &ModelConfig) -> Result<bool> {
        let given: Vec<(&str, &[i64], bool)> = config
            .input
            .iter()
            .map(|i| {
                (
                    i.name.as_str(),
                    checked_dims(&i.dims, &i.reshape),
                    i.allow_ragged_batch,
                )
            })
            .chain(
                config
                    .output
                    .iter()
                    .map(|o| (o.name.as_str(), checked_dims(&o.dims, &o.reshape), false)),
            )
            .collect();
        if given.is_empty() {
            return Ok(true);
        }
        if given.iter().any(|&(.., ragged)| ragged) {
            return Ok(true);
        }
        let mut hint = false;
        let mut explicit: Option<bool> = None;
        for (name, dims, _) in given {
            let Some(info) = self.inputs.get(name).or_else(|| self.outputs.get(name)) else {
                continue;
            };
            if info.dims.is_empty() {
                continue;
            }
            if dims.is_empty() {
                if explicit.is_none() {
                    hint = true;
                }
                continue;
            }
            let batches = dims.len() + 1 == info.dims.len();
            match explicit {
                Some(earlier) if earlier != batches => {
                    return Err(Error::internal(format!(
                        "unable to autofill for '{}', model tensor configurations are \
                         contradicting each other in terms of whether batching is supported",
                        config.name
                    )));
                }
                _ => {
                    explicit = Some(batches);
                    hint = batches;
                }
            }
        }
        Ok(hint)
    }

    fn complete_inputs(&self, config: &mut ModelConfig, batching: Batching) -> Result<()> {
        let model = config.name.clone();
        let mut left: Vec<(&String, &TensorInfo)> = self.inputs.iter().collect();
        for input in &mut config.input {
            if let Some(at) = left.iter().position(|(name, _)| **name == input.name) {
                let (_, info) = left.remove(at);
                fill(&model, info, batching, input)?;
            }
        }
        let mut taken: Vec<&str> = config
            .batch_input
            .iter()
            .flat_map(|b| b.target_name.iter().map(String::as_str))
            .collect();
        if let Some(SchedulingChoice::SequenceBatching(s)) = &config.scheduling_choice {
            taken.extend(s.control_input.iter().map(|c| c.name.as_str()));
        }
        left.retain(|(name, _)| !taken.contains(&name.as_str()));
        for (name, info) in left {
            let mut input = ModelInput {
                name: name.clone(),
                ..Default::default()
            };
            fill(&model, info, batching, &mut input)?;
            config.input.push(input);
        }
        Ok(())
    }

    fn complete_outputs(&self, config: &mut ModelConfig, batching: Batching) -> Result<()> {
        let model = config.name.clone();
        if config.output.is_empty() {
            for (name, info) in &self.outputs {
                if info.dims.is_empty() {
                    return Err(Error::invalid_arg(format!(
                        "Unable to autofill for '{model}': the rank of model tensor '{name}' is 0 \
                         which is not supported"
                    )));
                }
                let mut output = ModelOutput {
                    name: name.clone(),
                    ..Default::default()
                };
                fill(&model, info, batching, &mut output)?;
                config.output.push(output);
            }
            return Ok(());
        }
        for output in &mut config.output {
            if let Some(info) = self.outputs.get(&output.name) {
                fill(&model, info, batching, output)?;
            }
        }
        Ok(())
    }
}

/// An input or output of a configuration: the parts auto-complete fills.
trait ConfigTensor {
    /// Its name, datatype, dims and reshape.
    fn parts(
        &mut self,
    ) -> (
        &str,
        &mut i32,
        &mut Vec<i64>,
        &mut Option<ModelTensorReshape>,
    );
}

/// Implements [`ConfigTensor`] for configuration messages with these fields.
macro_rules! config_tensor {
    ($($message:ty),*) => {$(
        impl ConfigTensor for $message {
            fn parts(&mut self) -> (&str, &mut i32, &mut Vec<i64>, &mut Option<ModelTensorReshape>) {
                (&self.name, &mut self.data_type, &mut self.dims, &mut self.reshape)
            }
        }
    )*};
}

config_tensor!(ModelInput, ModelOutput);

/// Fills a tensor's datatype when it has none, and its dims (with a
/// reshape to `[]` when only the batch dimension is left) when empty.
fn fill(
    model: &str,
    info: &TensorInfo,
    batching: Batching,
    tensor: &mut impl ConfigTensor,
) -> Result<()> {
    let (name, data_type, dims, reshape) = tensor.parts();
    if DataType::from_config_number(*data_type).is_none() {
        *data_type = dtype::from_tf(info.dtype).map_or(0, DataType::config_number);
    }
    if !dims.is_empty() {
        return Ok(());
    }
    if info.dims.is_empty() {
        return Err(Error::invalid_arg(format!(
            "Unable to autofill for '{model}': the rank of model tensor '{name}' is 0 and \
             dimensions are not defined"
        )));
    }
    let (completed, batch_only) = completed_dims(&info.dims, batching.supported);
    *dims = completed;
    if batch_only.is_some() {
        *reshape = batch_only;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
