//! Inputs, outputs, reshapes and batch inputs/outputs.

use std::collections::HashSet;

use oxiserve_proto::{
    ModelConfig,
    inference::{DataType, ModelTensorReshape, batch_input, model_input::Format},
};

use crate::{batch_plan::BatchPlan, error::ConfigError};

/// A variable-size dimension.
const WILDCARD: i64 = -1;

/// What inputs and outputs have in common for validation.
struct Io<'a> {
    path: String,
    name: &'a str,
    data_type: i32,
    dims: &'a [i64],
    reshape: Option<&'a ModelTensorReshape>,
    is_shape_tensor: bool,
}

pub(super) fn check(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    let inputs = config.input.iter().enumerate().map(|(i, t)| Io {
        path: format!("input[{i}]"),
        name: &t.name,
        data_type: t.data_type,
        dims: &t.dims,
        reshape: t.reshape.as_ref(),
        is_shape_tensor: t.is_shape_tensor,
    });
    let outputs = config.output.iter().enumerate().map(|(i, t)| Io {
        path: format!("output[{i}]"),
        name: &t.name,
        data_type: t.data_type,
        dims: &t.dims,
        reshape: t.reshape.as_ref(),
        is_shape_tensor: t.is_shape_tensor,
    });
    let is_trt = config.platform == "tensorrt_plan";
    for (kind, tensors) in [
        ("input", inputs.collect::<Vec<_>>()),
        ("output", outputs.collect()),
    ] {
        let mut seen = HashSet::new();
        for io in &tensors {
            check_tensor(io, BatchPlan::of(config), errors);
            if !io.name.is_empty() && !seen.insert(io.name) {
                errors.push(ConfigError::field(
                    format!("{}.name", io.path),
                    format!("{kind} name '{}' is used twice", io.name),
                ));
            }
            if io.is_shape_tensor && !is_trt {
                errors.push(ConfigError::field(
                    format!("{}.is_shape_tensor", io.path),
                    "shape tensors are only supported for the TensorRT platform",
                ));
            }
        }
    }
    for (i, input) in config.input.iter().enumerate() {
        if matches!(input.format(), Format::Nhwc | Format::Nchw) && input.dims.len() != 3 {
            errors.push(ConfigError::field(
                format!("input[{i}].format"),
                format!(
                    "{} requires exactly 3 dims, got {}",
                    input.format().as_str_name(),
                    input.dims.len()
                ),
            ));
        }
    }
    check_batch_io(config, errors);
}

fn check_tensor(io: &Io, batch: BatchPlan, errors: &mut Vec<ConfigError>) {
    let field = |f: &str| format!("{}.{f}", io.path);
    if io.name.is_empty() {
        errors.push(ConfigError::field(field("name"), "must specify 'name'"));
    }
    if io.data_type == DataType::TypeInvalid as i32 {
        errors.push(ConfigError::field(
            io.path.clone(),
            format!(
                "'{}' must specify 'data_type' (TYPE_FP32, TYPE_INT64, TYPE_STRING, ...)",
                io.name
            ),
        ));
    }
    // Non-batching models may use an empty reshape to say "scalar": dims [1] -> [].
    if io.dims.is_empty() {
        errors.push(ConfigError::field(
            io.path.clone(),
            format!("'{}' must specify 'dims'", io.name),
        ));
    }
    if let Some(d) = io.dims.iter().find(|d| **d < 1 && **d != WILDCARD) {
        errors.push(ConfigError::field(
            field("dims"),
            format!(
                "'{}' has dimension {d}; dimensions must be >= 1, or -1 for a variable size",
                io.name
            ),
        ));
    }
    let Some(reshape) = io.reshape else { return };
    if reshape.shape.is_empty() && !batch.is_batching() {
        errors.push(ConfigError::field(
            field("reshape"),
            format!("'{}' cannot have an empty reshape in a non-batching model (scalars are not supported)", io.name),
        ));
    }
    if let Some(d) = reshape.shape.iter().find(|d| **d < 1 && **d != WILDCARD) {
        errors.push(ConfigError::field(
            field("reshape.shape"),
            format!(
                "'{}' has reshape dimension {d}; dimensions must be >= 1, or -1",
                io.name
            ),
        ));
        return;
    }
    if !same_size(io.dims, &reshape.shape) {
        errors.push(ConfigError::field(
            field("reshape"),
            format!(
                "'{}' has dims {:?} and reshape {:?} of different sizes",
                io.name, io.dims, reshape.shape
            ),
        ));
    }
}

/// Whether dims and reshape hold the same number of elements, segment by
/// segment between variable-size dimensions (an empty reshape equals [1]).
fn same_size(dims: &[i64], reshape: &[i64]) -> bool {
    let segments = |shape: &[i64]| -> Vec<i64> {
        shape
            .split(|d| *d == WILDCARD)
            .map(|s| s.iter().product())
            .collect()
    };
    if reshape.is_empty() {
        return segments(dims) == [1];
    }
    segments(dims) == segments(reshape)
}

fn check_batch_io(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    let inputs: HashSet<&str> = config.input.iter().map(|t| t.name.as_str()).collect();
    let outputs: HashSet<&str> = config.output.iter().map(|t| t.name.as_str()).collect();
    let unknown_source = |path: String, sources: &[String], errors: &mut Vec<ConfigError>| {
        if sources.len() != 1 {
            errors.push(ConfigError::field(
                format!("{path}.source_input"),
                format!("expects exactly 1 source input, got {}", sources.len()),
            ));
        }
        for s in sources.iter().filter(|s| !inputs.contains(s.as_str())) {
            errors.push(ConfigError::field(
                format!("{path}.source_input"),
                format!("unknown source input '{s}'"),
            ));
        }
    };
    for (i, b) in config.batch_input.iter().enumerate() {
        let path = format!("batch_input[{i}]");
        unknown_source(path.clone(), &b.source_input, errors);
        let dt = b.data_type();
        if dt != DataType::TypeInt32 && dt != DataType::TypeFp32 {
            errors.push(ConfigError::field(
                format!("{path}.data_type"),
                format!(
                    "batch input ({}) data type must be TYPE_INT32 or TYPE_FP32",
                    batch_input::Kind::try_from(b.kind).map_or("?", |k| k.as_str_name())
                ),
            ));
        }
    }
    for (i, b) in config.batch_output.iter().enumerate() {
        let path = format!("batch_output[{i}]");
        unknown_source(path.clone(), &b.source_input, errors);
        let mut targets = HashSet::new();
        for t in &b.target_name {
            if !outputs.contains(t.as_str()) {
                errors.push(ConfigError::field(
                    format!("{path}.target_name"),
                    format!("unknown target output '{t}'"),
                ));
            }
            if !targets.insert(t) {
                errors.push(ConfigError::field(
                    format!("{path}.target_name"),
                    format!("target output '{t}' is listed twice"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_size;

    #[test]
    fn reshape_sizes() {
        assert!(same_size(&[3, 4], &[12]));
        assert!(same_size(&[1], &[]));
        assert!(!same_size(&[2], &[]));
        assert!(same_size(&[-1, 2, 3], &[-1, 6]));
        assert!(!same_size(&[-1, 2, 3], &[6, -1]));
        assert!(!same_size(&[-1, 3], &[-1, -1, 3]));
        assert!(same_size(&[128, 128, 3], &[128, 128, 3]));
    }
}
