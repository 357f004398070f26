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
//! still batch only with equal shapes.

use bytes::Bytes;
use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{DataType, Error, Result, Tensor, element_count};

use super::buckets::run_ends;
use crate::scheduler::Job;

/// What one more run costs when none is configured, in padded elements: a
/// text encoder's run of a few rows costs about what 20 to 40 more tokens do.
const DEFAULT_BUCKET_COST: u64 = 32;

/// Which inputs get padded, and with what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Padding {
    /// Variable-size, fixed-width inputs.
    pub inputs: Vec<String>,
    value: f64,
    /// `Some(cost of a run)` with `"buckets"`; `None` pads to the batch's longest.
    bucket_cost: Option<u64>,
}

impl Padding {
    /// The padding `config` asks for, if any.
    pub fn new(config: &ModelConfig) -> Result<Option<Self>> {
        let param = |key: &str| config.parameters.get(key).map(|p| p.string_value.trim());
        let buckets = match param("batch_padding") {
            None | Some("") | Some("none") => None,
            Some("longest") => Some(false),
            Some("buckets") => Some(true),
            Some(other) => {
                return Err(Error::invalid_arg(format!(
                    "model '{}': parameter 'batch_padding' must be 'longest', 'buckets' or \
                     'none', got '{other}'",
                    config.name
                )));
            }
        };
        let bucket_cost = match (param("batch_bucket_cost"), buckets) {
            (None, Some(true)) => Some(DEFAULT_BUCKET_COST),
            (None, _) => None,
            (Some(text), Some(true)) => Some(text.parse::<u64>().map_err(|_| {
                Error::invalid_arg(format!(
                    "model '{}': parameter 'batch_bucket_cost' must be a whole number of \
                     padded elements, got '{text}'",
                    config.name
                ))
            })?),
            (Some(text), _) => {
                return Err(Error::invalid_arg(format!(
                    "model '{}': parameter 'batch_bucket_cost' ('{text}') needs batch_padding \
                     'buckets'",
                    config.name
                )));
            }
        };
        if buckets.is_none() {
            return Ok(None);
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
        Ok(Some(Self {
            inputs,
            value,
            bucket_cost,
        }))
    }

    /// Pads the padded inputs of every job of `batch` to the batch's longest
    /// shape (beyond the batch dimension), or, with buckets, sorts the batch
    /// by length and pads each run of it to the run's longest.
    pub fn apply(&self, batch: &mut [Job]) {
        if batch.len() < 2 {
            return;
        }
        let Some(cost) = self.bucket_cost else {
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
    use oxiserve_proto::inference::{ModelInput, ModelParameter};

    use super::*;

    fn config(parameters: &[(&str, &str)]) -> ModelConfig {
        ModelConfig {
            name: "enc".into(),
            max_batch_size: 8,
            input: vec![ModelInput {
                name: "ids".into(),
                data_type: DataType::Int64.config_number(),
                dims: vec![-1],
                ..Default::default()
            }],
            parameters: parameters
                .iter()
                .map(|(k, v)| {
                    let value = ModelParameter {
                        string_value: (*v).into(),
                    };
                    ((*k).into(), value)
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn buckets_take_the_default_or_the_configured_run_cost() {
        let longest = Padding::new(&config(&[("batch_padding", "longest")])).unwrap();
        assert_eq!(longest.unwrap().bucket_cost, None);
        let buckets = Padding::new(&config(&[("batch_padding", "buckets")])).unwrap();
        assert_eq!(buckets.unwrap().bucket_cost, Some(DEFAULT_BUCKET_COST));
        let set = [("batch_padding", "buckets"), ("batch_bucket_cost", "100")];
        let padding = Padding::new(&config(&set)).unwrap().unwrap();
        assert_eq!(
            (padding.bucket_cost, &padding.inputs[..]),
            (Some(100), &["ids".to_string()][..])
        );
        assert_eq!(Padding::new(&config(&[])).unwrap(), None);
    }

    #[test]
    fn bad_padding_parameters_name_the_model_and_parameter() {
        let error = |parameters: &[(&str, &str)]| {
            Padding::new(&config(parameters)).unwrap_err().to_string()
        };
        let message = error(&[("batch_padding", "bucket")]);
        assert!(message.contains("model 'enc': parameter 'batch_padding' must be 'longest', 'buckets' or 'none', got 'bucket'"), "{message}");
        let message = error(&[("batch_padding", "buckets"), ("batch_bucket_cost", "-1")]);
        assert!(
            message.contains(
                "'batch_bucket_cost' must be a whole number of padded elements, got '-1'"
            ),
            "{message}"
        );
        let message = error(&[("batch_padding", "longest"), ("batch_bucket_cost", "8")]);
        assert!(
            message.contains("'batch_bucket_cost' ('8') needs batch_padding 'buckets'"),
            "{message}"
        );
        let message = error(&[("batch_bucket_cost", "8")]);
        assert!(
            message.contains("needs batch_padding 'buckets'"),
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
