//! One model instance: an OpenVINO infer request run on the instance's
//! thread. A group of requests becomes one tensor per input (the one copy
//! OpenVINO needs), kept for the next group of the same shape; each output is
//! copied out of the infer request, whose buffers the next inference reuses,
//! and sliced per request.

use std::{collections::HashMap, sync::Arc};

use bytes::Bytes;
use openvino::{InferRequest, Shape, Tensor};
use oxiserve_backend::{
    BackendRequest, BatchOutput, ComputeTiming, ModelInstance, execute_grouped,
};
use oxiserve_types::{DataType, Error, Result};

use crate::{dtype, error::describe};

/// What every instance of a model knows about its tensors.
#[derive(Debug)]
pub(crate) struct Plan {
    pub model: String,
    /// Whether the first dimension of every tensor is the batch (max_batch_size > 0).
    pub batching: bool,
    /// The batch every inference must have (`SKIP_OV_DYNAMIC_BATCHSIZE`).
    pub fixed_batch: Option<usize>,
    /// Pads smaller batches to `fixed_batch` (`ENABLE_BATCH_PADDING`).
    pub batch_padding: bool,
    pub outputs: Vec<String>,
}

pub(crate) struct OpenVinoInstance {
    pub request: InferRequest,
    pub plan: Arc<Plan>,
    /// The last tensor given to each input, by input name, with its shape:
    /// reused while groups keep that shape, so a steady load allocates none.
    pub inputs: HashMap<String, (Vec<i64>, Tensor)>,
}

impl ModelInstance for OpenVinoInstance {
    fn execute(&mut self, requests: Vec<BackendRequest>, timing: &mut ComputeTiming) {
        let batching = self.plan.batching;
        execute_grouped(requests, batching, timing, |group| self.run(group));
    }
}

impl OpenVinoInstance {
    /// Runs one group of requests that fit in one tensor per input.
    fn run(&mut self, group: &[BackendRequest]) -> Result<Vec<BatchOutput>> {
        let model = &self.plan.model;
        let rows = group
            .iter()
            .map(|r| {
                r.request
                    .inputs
                    .first()
                    .map_or(0, |t| t.shape.first().copied().unwrap_or(0))
            })
            .sum::<i64>();
        let padded = self.padded_rows(rows)?;
        for first in &group[0].request.inputs {
            let name = &first.name;
            let element = dtype::to_openvino(first.datatype).ok_or_else(|| {
                Error::invalid_arg(format!(
                    "model '{model}', input '{name}': datatype {} is not supported by OpenVINO",
                    first.datatype.wire_name()
                ))
            })?;
            let mut shape = first.shape.clone();
            if self.plan.batching {
                shape[0] = padded;
            }
            let fail = |e: openvino::InferenceError| {
                Error::internal(format!(
                    "openvino: model '{model}', input '{name}': {}",
                    describe(&e)
                ))
            };
            let reused = self.inputs.get(name).is_some_and(|(s, _)| *s == shape);
            if !reused {
                let tensor =
                    Tensor::new(element, &Shape::new(&shape).map_err(fail)?).map_err(fail)?;
                self.inputs.insert(name.clone(), (shape, tensor));
            }
            let tensor = &mut self.inputs.get_mut(name).expect("inserted above").1;
            let target = tensor.get_raw_data_mut().map_err(fail)?;
            let mut at = 0;
            for request in group {
                let part = request
                    .request
                    .inputs
                    .iter()
                    .find(|t| &t.name == name)
                    .expect("grouped requests carry the same inputs");
                let end = at + part.data.len();
                if end > target.len() {
                    return Err(too_long(model, name, end, target.len()));
                }
                target[at..end].copy_from_slice(&part.data);
                at = end;
            }
            if padded == rows && at != target.len() {
                return Err(too_long(model, name, at, target.len()));
            }
            // Padding rows are zeros (a reused tensor holds the last group's).
            target[at..].fill(0);
            if !reused {
                self.request.set_tensor(name, tensor).map_err(fail)?;
            }
        }
        self.request.infer().map_err(|e| {
            Error::internal(format!(
                "openvino: model '{model}': inference failed: {}",
                describe(&e)
            ))
        })?;
        self.plan
            .outputs
            .iter()
            .filter(|o| group.iter().any(|r| r.wants_output(o)))
            .map(|name| self.output(name, (padded != rows).then_some(rows)))
            .collect()
    }

    /// The rows to run: `rows`, or the fixed batch (when padding allows it).
    fn padded_rows(&self, rows: i64) -> Result<i64> {
        let Some(fixed) = self.plan.fixed_batch else {
            return Ok(rows);
        };
        let fixed = fixed as i64;
        if rows == fixed || (self.plan.batch_padding && rows < fixed) {
            return Ok(fixed);
        }
        Err(Error::invalid_arg(format!(
            "model '{}': expected requests with batch size '{fixed}', got '{rows}'... this error \
             can be avoided by setting 'ENABLE_BATCH_PADDING' parameter in model configuration \
             to 'YES' at a performance cost.",
            self.plan.model
        )))
    }

    /// The output `name`, cut to `rows` when the batch was padded.
    fn output(&self, name: &str, rows: Option<i64>) -> Result<BatchOutput> {
        let model = &self.plan.model;
        let fail = |e: openvino::InferenceError| {
            Error::internal(format!(
                "openvino: model '{model}', output '{name}': {}",
                describe(&e)
            ))
        };
        let tensor = self.request.get_tensor(name).map_err(fail)?;
        let element = tensor.get_element_type().map_err(fail)?;
        let dtype = dtype::from_openvino(element).ok_or_else(|| {
            Error::internal(format!(
                "openvino: model '{model}', output '{name}' has element type {element}, which \
                 Triton has no datatype for"
            ))
        })?;
        let mut shape = tensor.get_shape().map_err(fail)?.get_dimensions().to_vec();
        let mut data = tensor.get_raw_data().map_err(fail)?;
        if let (Some(rows), Some(total)) = (rows, shape.first().copied()) {
            let keep = data.len() / total.max(1) as usize * rows as usize;
            data = &data[..keep];
            shape[0] = rows;
        }
        Ok(output(name, dtype, shape, data))
    }
}

fn output(name: &str, dtype: DataType, shape: Vec<i64>, data: &[u8]) -> BatchOutput {
    BatchOutput::new(name, dtype, shape, Bytes::copy_from_slice(data))
}

fn too_long(model: &str, name: &str, have: usize, need: usize) -> Error {
    Error::invalid_arg(format!(
        "model '{model}', input '{name}' holds {have} bytes, its shape needs {need}"
    ))
}
