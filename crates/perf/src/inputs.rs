//! The input tensors of every request, built once before the load starts:
//! shapes resolved (batch dim, `--shape` for variable dims) and data zero,
//! random or from a JSON file.

use std::{collections::HashMap, path::PathBuf};

use bytes::Bytes;
use oxiserve_types::{DataType, encode_bytes_elements};

use crate::{
    data_file::{self, FileTensor},
    error::{Error, Result},
    model::{ModelInfo, TensorInfo},
};

/// Where input values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum DataSource {
    Zero,
    Random,
    File(PathBuf),
}

impl DataSource {
    /// `zero`, `random`, or a file path.
    pub fn parse(text: &str) -> DataSource {
        match text {
            "zero" => DataSource::Zero,
            "random" => DataSource::Random,
            path => DataSource::File(PathBuf::from(path)),
        }
    }
}

/// How to build inputs.
#[derive(Debug, Clone)]
pub struct InputOptions {
    pub source: DataSource,
    pub batch_size: u32,
    pub shapes: HashMap<String, Vec<i64>>,
    pub string_length: usize,
    pub string_data: Option<String>,
}

/// One input of one request: full shape (with the batch dim) and raw bytes
/// (little-endian elements; BYTES in the 4-byte-length-prefixed layout).
#[derive(Debug, Clone, PartialEq)]
pub struct InputTensor {
    pub name: String,
    pub datatype: DataType,
    pub shape: Vec<i64>,
    pub data: Bytes,
}

/// The inputs of each distinct request, in the order they are sent (round robin).
pub fn build(model: &ModelInfo, options: &InputOptions) -> Result<Vec<Vec<InputTensor>>> {
    check_batch(model, options.batch_size)?;
    for name in options.shapes.keys() {
        if !model.inputs.iter().any(|i| &i.name == name) {
            return Err(Error::new(format!(
                "--shape names '{name}', but model '{}' has no such input (inputs: {})",
                model.name,
                input_names(model)
            )));
        }
    }
    match &options.source {
        DataSource::File(path) => from_file(model, options, path),
        _ => {
            let step = model
                .inputs
                .iter()
                .map(|input| {
                    let dims = resolve_dims(input, options.shapes.get(&input.name))?;
                    Ok(generated(model, input, &dims, options))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(vec![step])
        }
    }
}

fn input_names(model: &ModelInfo) -> String {
    let names: Vec<&str> = model.inputs.iter().map(|i| i.name.as_str()).collect();
    names.join(", ")
}

fn check_batch(model: &ModelInfo, batch_size: u32) -> Result<()> {
    if batch_size == 0 {
        return Err(Error::new("batch size must be at least 1"));
    }
    match model.batch.limit() {
        None if batch_size > 1 => Err(Error::new(format!(
            "model '{}' does not batch (max_batch_size 0): batch size must be 1",
            model.name
        ))),
        Some(limit) if batch_size > limit.get() => Err(Error::new(format!(
            "batch size {batch_size} is over the max_batch_size {limit} of model '{}'",
            model.name
        ))),
        _ => Ok(()),
    }
}

/// The model's dims with `--shape` applied; every dim must end up fixed.
fn resolve_dims(input: &TensorInfo, given: Option<&Vec<i64>>) -> Result<Vec<i64>> {
    let Some(given) = given else {
        if input.dims.contains(&-1) {
            return Err(Error::new(format!(
                "input '{}' has variable dims {:?}: give its shape with --shape {}:d1,d2,...",
                input.name, input.dims, input.name
            )));
        }
        return Ok(input.dims.clone());
    };
    let fits = given.len() == input.dims.len()
        && given
            .iter()
            .zip(&input.dims)
            .all(|(g, d)| *d == -1 || g == d);
    if !fits {
        return Err(Error::new(format!(
            "--shape {}:{} does not fit the model's dims {:?} (batch dim excluded)",
            input.name,
            given
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            input.dims
        )));
    }
    Ok(given.clone())
}

/// The full request shape: the batch dim in front when the model batches.
fn request_shape(model: &ModelInfo, dims: &[i64], batch_size: u32) -> Vec<i64> {
    let mut shape = Vec::with_capacity(dims.len() + 1);
    if model.batch.is_batching() {
        shape.push(i64::from(batch_size));
    }
    shape.extend_from_slice(dims);
    shape
}

fn generated(
    model: &ModelInfo,
    input: &TensorInfo,
    dims: &[i64],
    options: &InputOptions,
) -> InputTensor {
    let shape = request_shape(model, dims, options.batch_size);
    let count = element_count(&shape);
    let random = options.source == DataSource::Random;
    let data = match input.datatype.element_size() {
        Some(size) if !random => Bytes::from(vec![0u8; count * size]),
        Some(_) => random_values(input.datatype, count),
        None => {
            let text = options.string_data.clone().unwrap_or_else(|| {
                if random {
                    random_string(options.string_length)
                } else {
                    "0".repeat(options.string_length)
                }
            });
            encode_bytes_elements(std::iter::repeat_n(text, count))
        }
    };
    InputTensor {
        name: input.name.clone(),
        datatype: input.datatype,
        shape,
        data,
    }
}

fn element_count(dims: &[i64]) -> usize {
    dims.iter().product::<i64>().try_into().unwrap_or(0)
}

fn random_values(datatype: DataType, count: usize) -> Bytes {
    let mut out = Vec::with_capacity(count * datatype.element_size().unwrap_or(1));
    for _ in 0..count {
        match datatype {
            DataType::Bool => out.push(fastrand::bool() as u8),
            DataType::Fp16 => out.extend(half::f16::from_f32(fastrand::f32()).to_le_bytes()),
            DataType::Bf16 => out.extend(half::bf16::from_f32(fastrand::f32()).to_le_bytes()),
            DataType::Fp32 => out.extend(fastrand::f32().to_le_bytes()),
            DataType::Fp64 => out.extend(fastrand::f64().to_le_bytes()),
            other => {
                let size = other.element_size().unwrap_or(1);
                // Small non-negative integers: valid in every integer type.
                out.push(fastrand::u8(0..100));
                out.extend(std::iter::repeat_n(0, size - 1));
            }
        }
    }
    Bytes::from(out)
}

fn random_string(len: usize) -> String {
    std::iter::repeat_with(fastrand::alphanumeric)
        .take(len)
        .collect()
}

/// One request per file entry; with batch size b, entry i fills the batch
/// with entries i, i+1, ..., i+b-1 (wrapping).
fn from_file(
    model: &ModelInfo,
    options: &InputOptions,
    path: &std::path::Path,
) -> Result<Vec<Vec<InputTensor>>> {
    let entries = data_file::read(path, &model.inputs)?;
    let batch = options.batch_size as usize;
    let mut steps = Vec::with_capacity(entries.len());
    for i in 0..entries.len() {
        let mut step = Vec::with_capacity(model.inputs.len());
        for (k, input) in model.inputs.iter().enumerate() {
            let first: &FileTensor = &entries[i][k];
            let dims = resolve_dims(
                input,
                first.shape.as_ref().or(options.shapes.get(&input.name)),
            )
            .map_err(|e| e.context(format!("{} entry {i}", path.display())))?;
            let mut data = Vec::new();
            for b in 0..batch {
                let sample = &entries[(i + b) % entries.len()][k];
                if sample.elements != element_count(&dims) {
                    return Err(Error::new(format!(
                        "{} entry {}: input '{}' has {} elements, its shape {dims:?} needs {}",
                        path.display(),
                        (i + b) % entries.len(),
                        input.name,
                        sample.elements,
                        element_count(&dims)
                    )));
                }
                data.extend_from_slice(&sample.data);
            }
            step.push(InputTensor {
                name: input.name.clone(),
                datatype: input.datatype,
                shape: request_shape(model, &dims, options.batch_size),
                data: Bytes::from(data),
            });
        }
        steps.push(step);
    }
    Ok(steps)
}
