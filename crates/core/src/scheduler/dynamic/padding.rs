//! Batch padding, beyond Triton (its issues #8156 and onnxruntime_backend
//! #21): with the model parameter `batch_padding: "longest"`, requests whose
//! variable-size inputs differ in length still batch together; before the
//! batch executes, each such input of each request is padded to the
//! batch's longest with `batch_pad_value` (default 0). Only for models that
//! accept padding (an encoder with an attention mask, say): outputs keep the
//! padded length. BYTES inputs are never padded, so they still batch only
//! with equal shapes.

use bytes::Bytes;
use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Error, Result, Tensor, element_count};

use crate::scheduler::Job;

/// Which inputs get padded, and with what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Padding {
    /// Variable-size, fixed-width inputs.
    pub inputs: Vec<String>,
    value: f64,
}

impl Padding {
    /// The padding `config` asks for, if any.
    pub fn new(config: &ModelConfig) -> Result<Option<Self>> {
        let param = |key: &str| config.parameters.get(key).map(|p| p.string_value.trim());
        match param("batch_padding") {
            None | Some("") | Some("none") => return Ok(None),
            Some("longest") => {}
            Some(other) => {
                return Err(Error::invalid_arg(format!(
                    "model '{}': parameter 'batch_padding' must be 'longest' or 'none', got '{other}'",
                    config.name
                )));
            }
        }
        if !BatchPlan::of(config).is_batching() {
            return Err(Error::invalid_arg(format!(
                "model '{}': batch_padding needs max_batch_size > 0",
                config.name
            )));
        }
        let value = match param("batch_pad_value") {
            None => 0.0,
            Some(text) => text.parse::<f64>().map_err(|_| {
                Error::invalid_arg(format!(
                    "model '{}': parameter 'batch_pad_value' must be a number, got '{text}'",
                    config.name
                ))
            })?,
        };
        let inputs = config
            .input
            .iter()
            .filter(|i| i.dims.contains(&-1) && !i.is_shape_tensor)
            .filter(|i| DataType::from_config_number(i.data_type) != Some(DataType::Bytes))
            .map(|i| i.name.clone())
            .collect();
        Ok(Some(Self { inputs, value }))
    }

    /// Pads the padded inputs of every job of `batch` to the batch's longest
    /// shape (beyond the batch dimension).
    pub fn apply(&self, batch: &mut [Job]) {
        if batch.len() < 2 {
            return;
        }
        // The batch dimension is left as it is.
        let skip = 1;
        for name in &self.inputs {
            let mut longest: Option<Vec<i64>> = None;
            for job in batch.iter() {
                let Some(tensor) = job.request.request.input(name) else {
                    continue;
                };
                let dims = &tensor.shape[skip.min(tensor.shape.len())..];
                longest = Some(match longest {
                    None => dims.to_vec(),
                    Some(l) if l.len() == dims.len() => {
                        l.iter().zip(dims).map(|(a, b)| *a.max(b)).collect()
                    }
                    Some(l) => l,
                });
            }
            let Some(longest) = longest else { continue };
            for job in batch.iter_mut() {
                let inputs = &mut job.request.request.inputs;
                if let Some(tensor) = inputs.iter_mut().find(|t| &t.name == name) {
                    let dims = &tensor.shape[skip.min(tensor.shape.len())..];
                    if dims != longest.as_slice() && dims.len() == longest.len() {
                        let mut shape = tensor.shape[..skip].to_vec();
                        shape.extend(&longest);
                        *tensor = pad(tensor, shape, self.value);
                    }
                }
            }
        }
    }
}

/// `tensor` grown to `shape` (no dimension smaller), new places set to `value`.
pub(crate) fn pad(tensor: &Tensor, shape: Vec<i64>, value: f64) -> Tensor {
    let size = tensor.datatype.element_size().unwrap_or(1);
    let fill = encode(tensor.datatype, value);
    let total = element_count(&shape).unwrap_or(0);
    let mut out = Vec::with_capacity(total * size);
    for _ in 0..total {
        out.extend_from_slice(&fill);
    }
    let from = &tensor.shape;
    let row = from.last().copied().unwrap_or(1).max(0) as usize * size;
    let rows = element_count(&from[..from.len().saturating_sub(1)]).unwrap_or(0);
    // Each innermost row of the source lands at the same index in the target.
    let mut index = vec![0i64; from.len().saturating_sub(1)];
    for r in 0..rows {
        let mut offset = 0usize;
        for (d, &i) in index.iter().enumerate() {
            offset = offset * shape[d] as usize + i as usize;
        }
        let last = shape.last().copied().unwrap_or(1) as usize;
        let at = offset * last * size;
        out[at..at + row].copy_from_slice(&tensor.data[r * row..(r + 1) * row]);
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < from[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let mut padded = tensor.clone();
    padded.shape = shape;
    padded.data = Bytes::from(out);
    padded
}

/// One element of `dtype` holding `value` (little-endian).
fn encode(dtype: DataType, value: f64) -> Vec<u8> {
    match dtype {
        DataType::Bool => vec![u8::from(value != 0.0)],
        DataType::Uint8 => vec![value as u8],
        DataType::Int8 => (value as i8).to_le_bytes().to_vec(),
        DataType::Uint16 => (value as u16).to_le_bytes().to_vec(),
        DataType::Int16 => (value as i16).to_le_bytes().to_vec(),
        DataType::Uint32 => (value as u32).to_le_bytes().to_vec(),
        DataType::Int32 => (value as i32).to_le_bytes().to_vec(),
        DataType::Uint64 => (value as u64).to_le_bytes().to_vec(),
        DataType::Int64 => (value as i64).to_le_bytes().to_vec(),
        DataType::Fp16 => half::f16::from_f64(value).to_le_bytes().to_vec(),
        DataType::Bf16 => half::bf16::from_f64(value).to_le_bytes().to_vec(),
        DataType::Fp32 => (value as f32).to_le_bytes().to_vec(),
        DataType::Fp64 => value.to_le_bytes().to_vec(),
        DataType::Bytes => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int64(shape: &[i64], values: &[i64]) -> Tensor {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor::new("X", DataType::Int64, shape.to_vec(), data.into())
    }

    #[test]
    fn pads_the_last_dimension() {
        let padded = pad(&int64(&[2, 2], &[1, 2, 3, 4]), vec![2, 4], 0.0);
        assert_eq!(padded, int64(&[2, 4], &[1, 2, 0, 0, 3, 4, 0, 0]));
    }

    #[test]
    fn pads_inner_dimensions_with_the_value() {
        let source = int64(&[1, 2, 2], &[1, 2, 3, 4]);
        let padded = pad(&source, vec![1, 3, 3], -1.0);
        assert_eq!(padded, int64(&[1, 3, 3], &[1, 2, -1, 3, 4, -1, -1, -1, -1]));
    }

    #[test]
    fn float_pad_values_are_encoded_in_the_datatype() {
        assert_eq!(encode(DataType::Fp32, 0.5), 0.5f32.to_le_bytes());
        assert_eq!(encode(DataType::Fp16, 1.0), half::f16::ONE.to_le_bytes());
        assert_eq!(encode(DataType::Bool, 1.0), [1]);
    }
}
