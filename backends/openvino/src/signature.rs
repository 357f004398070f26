//! A model's real inputs and outputs, checked against its configuration and
//! used to auto-complete it, with the messages of Triton's OpenVINO backend.

use openvino::{ElementType, Model, Node, PartialShape};
use oxiserve_backend::signature::{
    CompletedTensor, checked_dims, compare_dims, complete_batching, datatype_mismatch,
    input_count_mismatch, unexpected_tensor,
};
use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Error, ErrorKind, Result};

use crate::{dtype, error::describe};

/// One input or output as the model declares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorInfo {
    pub name: String,
    pub dtype: ElementType,
    /// `-1` for a dynamic dimension.
    pub dims: Vec<i64>,
}

/// The model's signature, in the model's order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Signature {
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
}

impl Signature {
    /// Reads the inputs and outputs of `model`.
    pub(crate) fn of(model: &Model, name: &str) -> Result<Self> {
        let fail = |what: &str, e: openvino::InferenceError| {
            Error::internal(format!(
                "openvino: model '{name}': reading its {what}: {}",
                describe(&e)
            ))
        };
        let inputs = (0..model.get_inputs_len().map_err(|e| fail("inputs", e))?)
            .map(|i| {
                let node = model.get_input_by_index(i).map_err(|e| fail("inputs", e))?;
                tensor_info(&node, name)
            })
            .collect::<Result<_>>()?;
        let outputs = (0..model.get_outputs_len().map_err(|e| fail("outputs", e))?)
            .map(|i| {
                let node = model
                    .get_output_by_index(i)
                    .map_err(|e| fail("outputs", e))?;
                tensor_info(&node, name)
            })
            .collect::<Result<_>>()?;
        Ok(Self { inputs, outputs })
    }

    pub(crate) fn input(&self, name: &str) -> Option<&TensorInfo> {
        self.inputs.iter().find(|t| t.name == name)
    }

    pub(crate) fn output(&self, name: &str) -> Option<&TensorInfo> {
        self.outputs.iter().find(|t| t.name == name)
    }

    /// Checks `config` against the model: the input count, and each
    /// configured input's and output's name, datatype and shape (a dynamic
    /// model dimension, or a configured -1, matches anything; with batching
    /// the batch dimension is not compared, the backend sets it).
    pub(crate) fn check(&self, config: &ModelConfig) -> Result<()> {
        let model = &config.name;
        if self.inputs.len() != config.input.len() {
            return Err(input_count_mismatch(
                model,
                config.input.len(),
                self.inputs.len(),
            ));
        }
        for input in &config.input {
            let info = self
                .input(&input.name)
                .ok_or_else(|| unexpected_tensor("input", &input.name, &names(&self.inputs)))?;
            check_tensor(
                config,
                "input",
                input.data_type,
                checked_dims(&input.dims, &input.reshape),
                info,
            )?;
        }
        for output in &config.output {
            let info = self
                .output(&output.name)
                .ok_or_else(|| unexpected_tensor("output", &output.name, &names(&self.outputs)))?;
            check_tensor(
                config,
                "output",
                output.data_type,
                checked_dims(&output.dims, &output.reshape),
                info,
            )?;
        }
        Ok(())
    }

    /// Triton's auto-complete: fills missing inputs or outputs (and
    /// `max_batch_size`, and `dynamic_batching`, when the model can batch)
    /// from the model.
    pub(crate) fn complete(
        &self,
        config: &mut ModelConfig,
        default_max_batch_size: i32,
    ) -> Result<()> {
        let can_batch = self
            .inputs
            .iter()
            .chain(&self.outputs)
            .all(|info| info.dims.first() == Some(&-1));
        if can_batch {
            complete_batching(config, default_max_batch_size.max(1));
        } else if config.max_batch_size != 0 {
            log::warn!(
                "model layout for model {} does not support batching while non-zero \
                 max_batch_size is specified",
                config.name
            );
        }
        let batching = BatchPlan::of(config).is_batching();
        if config.input.is_empty() {
            config.input = (self.inputs.iter())
                .map(|info| completed(info, batching).input())
                .collect();
        }
        if config.output.is_empty() {
            config.output = (self.outputs.iter())
                .map(|info| completed(info, batching).output())
                .collect();
        }
        Ok(())
    }
}

/// A port's name, element type and shape.
fn tensor_info(node: &Node, model: &str) -> Result<TensorInfo> {
    let name = node.get_name().map_err(|e| {
        Error::invalid_arg(format!(
            "unable to load model '{model}': a tensor has no name ({}); models without tensor \
             names are not supported",
            describe(&e)
        ))
    })?;
    let fail = |e: openvino::InferenceError| {
        Error::internal(format!(
            "openvino: model '{model}', tensor '{name}': {}",
            describe(&e)
        ))
    };
    let dtype = node.get_element_type().map_err(fail)?;
    let shape = node.get_partial_shape().map_err(fail)?;
    let dims = dims(&shape).ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported,
            format!(
                "unable to load model '{model}', tensor '{name}' has a dynamic rank, which \
                 oxiserve's openvino backend does not support"
            ),
        )
    })?;
    Ok(TensorInfo { name, dtype, dims })
}

/// A partial shape's dimensions, `-1` where dynamic; `None` for a dynamic rank.
pub(crate) fn dims(shape: &PartialShape) -> Option<Vec<i64>> {
    if shape.get_rank().is_dynamic() {
        return None;
    }
    Some(
        shape
            .get_dimensions()
            .iter()
            .map(|d| if d.is_dynamic() { -1 } else { d.get_min() })
            .collect(),
    )
}

fn names(infos: &[TensorInfo]) -> String {
    infos
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_tensor(
    config: &ModelConfig,
    direction: &str,
    data_type: i32,
    dims: &[i64],
    info: &TensorInfo,
) -> Result<()> {
    let model = &config.name;
    let name = &info.name;
    let configured = DataType::from_config_number(data_type);
    if configured == Some(DataType::Bytes) {
        return Err(Error::invalid_arg(format!(
            "unable to load model '{model}', unsupported datatype TYPE_STRING for {direction} \
             '{name}': oxiserve's openvino backend, as Triton's, takes numeric tensors only"
        )));
    }
    if configured.and_then(dtype::to_openvino) != Some(info.dtype) {
        return Err(datatype_mismatch(
            model,
            direction,
            name,
            data_type,
            dtype::from_openvino(info.dtype),
        ));
    }
    // Triton's `CompareDimsSupported` for OpenVINO: with batching the model
    // needs at least one dimension, and its first is not compared (the
    // configured shape's is -1, which matches any).
    let batch = BatchPlan::of(config);
    if batch.is_batching() && info.dims.is_empty() {
        return Err(Error::invalid_arg(format!(
            "model '{model}', tensor '{name}': for the model to support batching the shape \
             should have at least 1 dimension"
        )));
    }
    compare_dims(model, name, &info.dims, dims, batch, |m, c| {
        m == -1 || c == -1 || m == c
    })
}

/// A model tensor as auto-complete writes it.
fn completed(info: &TensorInfo, batching: bool) -> CompletedTensor {
    CompletedTensor::new(
        &info.name,
        dtype::from_openvino(info.dtype),
        &info.dims,
        batching,
    )
}

#[cfg(test)]
mod tests;
