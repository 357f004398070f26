//! A model's configuration against its signature (the inputs and outputs
//! the model file declares): the checks and auto-complete steps backends
//! share, with Triton's messages. Each backend reads its signature and
//! decides which checks apply.

use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelInput, ModelOutput, ModelTensorReshape, model_config::SchedulingChoice},
};
use oxiserve_types::{DataType, Error, Result, format_shape};

/// The shape a configured tensor is checked with: its `reshape` when it
/// has one, else its `dims`.
pub fn checked_dims<'a>(dims: &'a [i64], reshape: &'a Option<ModelTensorReshape>) -> &'a [i64] {
    reshape.as_ref().map_or(dims, |r| &r.shape)
}

/// Triton's error for a configured `direction` (`input`, `output`) tensor
/// the model does not have; `allowed` lists the model's, joined.
pub fn unexpected_tensor(direction: &str, name: &str, allowed: &str) -> Error {
    Error::invalid_arg(format!(
        "unexpected inference {direction} '{name}', allowed {direction}s are: {allowed}"
    ))
}

/// Triton's error for a model with other than the `expected` input count.
pub fn input_count_mismatch(model: &str, expected: usize, provided: usize) -> Error {
    Error::invalid_arg(format!(
        "unable to load model '{model}', configuration expects {expected} inputs, model \
         provides {provided}"
    ))
}

/// Triton's error for a configured datatype (`data_type`, a configuration
/// number) other than the model tensor's (`provided`, `None` when Triton
/// has no name for it).
pub fn datatype_mismatch(
    model: &str,
    direction: &str,
    name: &str,
    data_type: i32,
    provided: Option<DataType>,
) -> Error {
    let type_name = |t: Option<DataType>| t.map_or("TYPE_INVALID", DataType::config_name);
    Error::invalid_arg(format!(
        "unable to load model '{model}', configuration expects datatype {} for {direction} \
         '{name}', model provides {}",
        type_name(DataType::from_config_number(data_type)),
        type_name(provided)
    ))
}

/// Triton's check that, with batching, the model's shape `model_dims`
/// starts with a dynamic (-1) batch dimension.
pub fn require_batch_dimension(
    model: &str,
    name: &str,
    model_dims: &[i64],
    batch: BatchPlan,
) -> Result<()> {
    if batch.is_batching() && model_dims.first() != Some(&-1) {
        return Err(Error::invalid_arg(format!(
            "model '{model}', tensor '{name}': for the model to support batching the shape \
             should have at least 1 dimension and the first dimension must be -1; but shape \
             expected by the model is {}",
            format_shape(model_dims)
        )));
    }
    Ok(())
}

/// Triton's `CompareDims`: the model's shape `model_dims` against the
/// configured `dims` with the batch dimension (-1) in front when batching.
/// The ranks must be equal, and `same(model dimension, configured
/// dimension)` true for each dimension.
pub fn compare_dims(
    model: &str,
    name: &str,
    model_dims: &[i64],
    dims: &[i64],
    batch: BatchPlan,
    same: impl Fn(i64, i64) -> bool,
) -> Result<()> {
    let full = batch.full_shape(dims);
    let matches =
        model_dims.len() == full.len() && model_dims.iter().zip(&full).all(|(&m, &c)| same(m, c));
    if matches {
        return Ok(());
    }
    let configured = if batch.is_batching() {
        format!(
            "{} dimensions (an initial batch dimension because max_batch_size > 0 followed by the \
             explicit tensor shape, making complete shape {})",
            full.len(),
            format_shape(&full)
        )
    } else {
        format!("{} dimensions (shape {})", full.len(), format_shape(&full))
    };
    Err(Error::invalid_arg(format!(
        "model '{model}', tensor '{name}': the model expects {} dimensions (shape {}) but the \
         model configuration specifies {configured}",
        model_dims.len(),
        format_shape(model_dims)
    )))
}

/// A tensor's `dims` and `reshape` as auto-complete writes them from the
/// model's shape: without the batch dimension when `batching`, and `[1]`
/// (with an empty reshape when batching) for a tensor left with none.
pub fn completed_dims(
    model_dims: &[i64],
    batching: bool,
) -> (Vec<i64>, Option<ModelTensorReshape>) {
    let skip = usize::from(batching).min(model_dims.len());
    let mut dims = model_dims[skip..].to_vec();
    let mut reshape = None;
    if dims.is_empty() {
        dims.push(1);
        if batching {
            reshape = Some(ModelTensorReshape { shape: Vec::new() });
        }
    }
    (dims, reshape)
}

/// Triton's auto-complete for a model whose signature can batch: a
/// `max_batch_size` of 0 becomes `max_batch_size` (with Triton's warning),
/// and above 1 the dynamic batcher is enabled when no scheduler is
/// configured.
pub fn complete_batching(config: &mut ModelConfig, max_batch_size: i32) {
    if config.max_batch_size == 0 {
        config.max_batch_size = max_batch_size;
        log::warn!(
            "autofilled max_batch_size to {} for model '{}' since batching is supported but no \
             max_batch_size is specified in model configuration. Must specify max_batch_size to \
             utilize autofill with a larger max batch size",
            config.max_batch_size,
            config.name
        );
    }
    if config.max_batch_size > 1 && config.scheduling_choice.is_none() {
        config.scheduling_choice = Some(SchedulingChoice::DynamicBatching(Default::default()));
    }
}

/// A tensor as auto-complete writes it into the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedTensor {
    pub name: String,
    /// Its datatype's configuration number (0, `TYPE_INVALID`, when Triton
    /// has none).
    pub data_type: i32,
    pub dims: Vec<i64>,
    pub reshape: Option<ModelTensorReshape>,
}

impl CompletedTensor {
    /// The model's tensor `name` of datatype `data_type` and shape
    /// `model_dims`, its dims as [`completed_dims`] writes them.
    pub fn new(
        name: &str,
        data_type: Option<DataType>,
        model_dims: &[i64],
        batching: bool,
    ) -> Self {
        let (dims, reshape) = completed_dims(model_dims, batching);
        Self {
            name: name.to_string(),
            data_type: data_type.map_or(0, DataType::config_number),
            dims,
            reshape,
        }
    }

    /// The tensor as a configured input.
    pub fn input(self) -> ModelInput {
        ModelInput {
            name: self.name,
            data_type: self.data_type,
            dims: self.dims,
            reshape: self.reshape,
            ..Default::default()
        }
    }

    /// The tensor as a configured output.
    pub fn output(self) -> ModelOutput {
        ModelOutput {
            name: self.name,
            data_type: self.data_type,
            dims: self.dims,
            reshape: self.reshape,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests;
