//! Turns backend outputs into what the client sees: output `reshape` undone
//! and the classification extension (`class_count`: top-k "value:index:label"
//! strings instead of the raw tensor).

use std::sync::Arc;

use bytes::Bytes;
use oxiserve_backend::{BackendResponse, ModelContext};
use oxiserve_config::BatchPlan;
use oxiserve_types::{DataType, Error, InferResponse, Result, Tensor, encode_bytes_elements};

use super::reshape::map_shape;
use crate::shared_memory::OutputRegion;

/// What a loaded model knows about its outputs.
#[derive(Debug, Default)]
pub(crate) struct OutputInfo {
    /// (output name, configured dims, reshape) for outputs with a `reshape`.
    pub reshaped: Vec<(String, Vec<i64>, Vec<i64>)>,
    /// (output name, labels from its `label_filename`).
    pub labels: Vec<(String, Vec<String>)>,
    pub batching: bool,
}

impl OutputInfo {
    /// Reads what the configuration says about outputs, and their label files.
    pub fn load(context: &ModelContext) -> Result<Self> {
        let config = &context.config;
        let mut info = OutputInfo {
            batching: BatchPlan::of(config).is_batching(),
            ..Default::default()
        };
        for output in &config.output {
            if let Some(reshape) = &output.reshape {
                let entry = (
                    output.name.clone(),
                    output.dims.clone(),
                    reshape.shape.clone(),
                );
                info.reshaped.push(entry);
            }
            if !output.label_filename.is_empty() {
                let path = context.model_path.join(&output.label_filename);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    Error::invalid_arg(format!(
                        "cannot read label file '{}' of output '{}': {e}",
                        path.display(),
                        output.name
                    ))
                })?;
                let labels = text.lines().map(str::to_string).collect();
                info.labels.push((output.name.clone(), labels));
            }
        }
        Ok(info)
    }
}

/// How one request's outputs are shaped for the client.
#[derive(Debug, Clone)]
pub(crate) struct OutputShaping {
    pub model_name: Arc<str>,
    pub model_version: i64,
    pub request_id: String,
    pub info: Arc<OutputInfo>,
    /// (output name, class_count) for outputs asked for as classifications.
    pub classifications: Vec<(String, u32)>,
    /// Outputs to write into shared memory regions, and the regions inputs
    /// were read from: the request holds them all until its final response.
    pub output_regions: Vec<OutputRegion>,
}

impl OutputShaping {
    /// Lets go of the request's shared memory regions (its final response
    /// is shaped): from now on they may be unregistered.
    pub fn release_regions(&mut self) {
        self.output_regions.clear();
    }

    /// The client's view of a backend response.
    pub fn apply(&self, response: BackendResponse) -> Result<InferResponse> {
        let mut outputs = response.outputs;
        for output in &mut outputs {
            if let Some((_, dims, reshape)) =
                self.info.reshaped.iter().find(|(n, ..)| *n == output.name)
            {
                let split = usize::from(self.info.batching).min(output.shape.len());
                let mut shape = output.shape[..split].to_vec();
                shape.extend(map_shape(reshape, &output.shape[split..], dims));
                output.shape = shape;
            }
            if let Some(&(_, k)) = self.classifications.iter().find(|(n, _)| *n == output.name) {
                let labels = self
                    .info
                    .labels
                    .iter()
                    .find(|(n, _)| *n == output.name)
                    .map(|(_, l)| l.as_slice());
                *output = classify(output, k, labels, self.info.batching)?;
            }
            let name = Some(output.name.as_str());
            if let Some(target) = self.output_regions.iter().find(|t| t.output_name() == name) {
                target.write(output)?;
            }
        }
        Ok(InferResponse {
            model_name: self.model_name.to_string(),
            model_version: self.model_version,
            id: self.request_id.clone(),
            outputs,
            parameters: response.parameters,
        })
    }
}

/// Top-`k` classes of each batch row of `output`, as BYTES "value:index[:label]".
fn classify(output: &Tensor, k: u32, labels: Option<&[String]>, batching: bool) -> Result<Tensor> {
    let values = numeric_values(output)?;
    let is_float = matches!(
        output.datatype,
        DataType::Fp16 | DataType::Bf16 | DataType::Fp32 | DataType::Fp64
    );
    let rows = if batching {
        output.shape.first().copied().unwrap_or(1).max(1) as usize
    } else {
        1
    };
    let per_row = values.len() / rows.max(1);
    let k = (k as usize).min(per_row);
    let mut classes = Vec::with_capacity(rows * k);
    for row in values.chunks(per_row.max(1)).take(rows) {
        let mut order: Vec<usize> = (0..row.len()).collect();
        order.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
        for &index in order.iter().take(k) {
            let label = labels.and_then(|l| l.get(index));
            // Triton prints floats with six decimals and integers as they are.
            let value = if is_float {
                format!("{:.6}", row[index])
            } else {
                format!("{}", row[index] as i128)
            };
            classes.push(match label {
                Some(label) => format!("{value}:{index}:{label}"),
                None => format!("{value}:{index}"),
            });
        }
    }
    let shape = if batching {
        vec![rows as i64, k as i64]
    } else {
        vec![k as i64]
    };
    Ok(Tensor::new(
        output.name.clone(),
        DataType::Bytes,
        shape,
        encode_bytes_elements(classes),
    ))
}

fn numeric_values(output: &Tensor) -> Result<Vec<f64>> {
    let d: &Bytes = &output.data;
    let values = match output.datatype {
        DataType::Uint8 => d.iter().map(|&b| f64::from(b)).collect(),
        DataType::Int8 => d.iter().map(|&b| f64::from(b as i8)).collect(),
        DataType::Uint16 => d
            .chunks_exact(2)
            .map(|c| f64::from(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        DataType::Int16 => d
            .chunks_exact(2)
            .map(|c| f64::from(i16::from_le_bytes([c[0], c[1]])))
            .collect(),
        DataType::Uint32 => d
            .chunks_exact(4)
            .map(|c| f64::from(u32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        DataType::Int32 => d
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        DataType::Uint64 => d
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        DataType::Int64 => d
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        DataType::Fp16 => d
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        DataType::Bf16 => d
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        DataType::Fp32 => d
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
            .collect(),
        DataType::Fp64 => d
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        DataType::Bool | DataType::Bytes => {
            return Err(Error::invalid_arg(format!(
                "class result not available for output due to unsupported type '{}'",
                output.datatype
            )));
        }
    };
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiserve_types::bytes_elements;

    fn fp32(values: &[f32], shape: Vec<i64>) -> Tensor {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor::new("OUT", DataType::Fp32, shape, Bytes::from(data))
    }

    fn strings(t: &Tensor) -> Vec<String> {
        let n = t.shape.iter().product::<i64>() as usize;
        bytes_elements("OUT", &t.data, n)
            .unwrap()
            .iter()
            .map(|e| String::from_utf8(e.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn top_k_per_batch_row_with_labels() {
        let labels = vec!["a".to_string(), "b".into(), "c".into()];
        let t = fp32(&[0.1, 0.7, 0.2, 3.0, 1.0, 2.0], vec![2, 3]);
        let out = classify(&t, 2, Some(&labels), true).unwrap();
        assert_eq!(out.shape, vec![2, 2]);
        assert_eq!(
            strings(&out),
            [
                "0.700000:1:b",
                "0.200000:2:c",
                "3.000000:0:a",
                "2.000000:2:c"
            ]
        );
    }

    #[test]
    fn k_is_capped_and_labels_are_optional() {
        let t = fp32(&[1.0, 5.0], vec![2]);
        let out = classify(&t, 9, None, false).unwrap();
        assert_eq!(out.shape, vec![2]);
        assert_eq!(strings(&out), ["5.000000:1", "1.000000:0"]);
    }

    #[test]
    fn integers_print_without_decimals() {
        let data: Vec<u8> = [5i32, 9, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        let t = Tensor::new("OUT", DataType::Int32, vec![3], Bytes::from(data));
        assert_eq!(
            strings(&classify(&t, 2, None, false).unwrap()),
            ["9:1", "5:0"]
        );
    }

    #[test]
    fn bytes_outputs_cannot_be_classified() {
        let t = Tensor::new(
            "OUT",
            DataType::Bytes,
            vec![1],
            encode_bytes_elements(["x"]),
        );
        let err = classify(&t, 1, None, false).unwrap_err();
        assert!(err.message.contains("unsupported type 'BYTES'"), "{err}");
    }
}
