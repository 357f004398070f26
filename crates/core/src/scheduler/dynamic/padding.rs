//! Batch padding, beyond Triton (its issues #8156 and onnxruntime_backend
//! #21): with the model parameter `batch_padding: "longest"`, requests whose
//! variable-size inputs differ in length still batch together; before the
//! batch executes, each such input of each request is padded to the
//! batch's longest with `batch_pad_value` (default 0). With `"buckets"` the
//! batch is sorted by length and cut into runs, each padded to its own
//! longest, wherever the padding a cut saves outweighs one more model run
//! (`batch_bucket_cost`, in padded elements; see `buckets.rs`). Only for
//! models that accept padding (an encoder with an attention mask, say):
//! outputs keep the padded length. BYTES inputs are never padded, so they
//! still batch only with equal shapes. The parameters are read (and
//! validated) by `oxiserve_config::BatchPadding`.

use bytes::Bytes;
use oxiserve_config::BatchPadding;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Error, Result, Tensor, element_count};

use super::buckets::run_ends;
use crate::scheduler::Job;

/// Which inputs get padded, and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Padding {
    /// Variable-size, fixed-width inputs.
    pub inputs: Vec<String>,
    settings: BatchPadding,
}

impl Padding {
    /// The padding `config` asks for, if any.
    pub fn new(config: &ModelConfig) -> Result<Option<Self>> {
        let settings = BatchPadding::of(config)
            .map_err(|e| Error::invalid_arg(format!("model '{}': {e}", config.name)))?;
        let Some(settings) = settings else {
            return Ok(None);
        };
        let inputs = config
            .input
            .iter()
            .filter(|i| i.dims.contains(&-1) && !i.is_shape_tensor)
            .filter(|i| DataType::from_config_number(i.data_type) != Some(DataType::Bytes))
            .map(|i| i.name.clone())
            .collect();
        Ok(Some(Self { inputs, settings }))
    }

    /// Pads the padded inputs of every job of `batch` to the batch's longest
    /// shape (beyond the batch dimension), or, with buckets, sorts the batch
    /// by length and pads each run of it to the run's longest.
    pub fn apply(&self, batch: &mut [Job]) {
        if batch.len() < 2 {
            return;
        }
        let Some(cost) = self.settings.bucket_cost else {
            return self.pad_to_longest(batch);
        };
        batch.sort_by_cached_key(|job| self.length(job));
        let requests: Vec<(u64, u64)> = batch
            .iter()
            .map(|job| (job.batch_size.max(1), self.length(job)))
            .collect();
        let mut start = 0;
        for end in run_ends(&requests, cost) {
            self.pad_to_longest(&mut batch[start..end]);
            start = end;
        }
    }

    /// Elements per row of the job's first padded input (0 without one).
    fn length(&self, job: &Job) -> u64 {
        self.inputs
            .iter()
            .find_map(|name| job.request.request.input(name))
            .and_then(|t| element_count(t.shape.get(1..).unwrap_or_default()))
            .unwrap_or(0) as u64
    }

    /// Pads the padded inputs of every job of `batch` to their longest.
    fn pad_to_longest(&self, batch: &mut [Job]) {
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
                        *tensor = pad(tensor, shape, self.settings.value);
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
    use oxiserve_proto::inference::ModelInput;

    use super::*;

    #[test]
    fn padded_inputs_are_the_variable_size_non_bytes_ones_and_errors_name_the_model() {
        let input = |name: &str, datatype: DataType, dims: Vec<i64>| ModelInput {
            name: name.into(),
            data_type: datatype.config_number(),
            dims,
            ..Default::default()
        };
        let mut config = oxiserve_backend::testing::config_with_parameters(
            "enc",
            &[("batch_padding", "buckets")],
        );
        config.max_batch_size = 8;
        config.input = vec![
            input("ids", DataType::Int64, vec![-1]),
            input("text", DataType::Bytes, vec![-1]),
            input("fixed", DataType::Fp32, vec![4]),
        ];
        let padding = Padding::new(&config).unwrap().unwrap();
        assert_eq!(padding.inputs, ["ids"]);
        assert_eq!(padding.settings.bucket_cost, Some(32));
        config.max_batch_size = 0;
        let message = Padding::new(&config).unwrap_err().to_string();
        assert!(
            message.contains("model 'enc': parameter 'batch_padding' needs max_batch_size > 0"),
            "{message}"
        );
    }

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
