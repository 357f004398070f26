//! `model_warmup`: the sample requests every instance runs before its model
//! is ready, built once per load from the configuration and the model's
//! `warmup/` folder, as Triton builds them.

use std::{path::Path, sync::mpsc, time::SystemTime};

use bytes::Bytes;
use oxiserve_backend::{
    BackendRequest, CancelFlag, ComputeTiming, ModelInstance, ResponseEvent, ResponseSink,
    ResponseTarget,
};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelWarmup, model_warmup::input::InputDataType},
};
use oxiserve_types::{DataType, Error, InferRequest, Result, Tensor};

use crate::infer::validate::validate;

/// The folder of a model that holds `input_data_file`s.
const WARMUP_FOLDER: &str = "warmup";

/// One warmup sample: `requests` (batch_size requests of batch 1) executed
/// together as one batch, `count` times.
#[derive(Debug, Clone)]
pub(crate) struct WarmupSample {
    name: String,
    count: u32,
    requests: Vec<(InferRequest, Vec<String>)>,
}

/// Builds the samples of `config`; a sample that cannot be built (a
/// missing file, a -1 dimension, too little data) fails the load.
pub(crate) fn samples(config: &ModelConfig, model_path: &Path) -> Result<Vec<WarmupSample>> {
    let mut samples = Vec::new();
    for setting in &config.model_warmup {
        if setting.batch_size == 0 {
            log::debug!("skipping batch 0 warmup sample '{}'", setting.name);
            continue;
        }
        let request = sample_request(config, model_path, setting).map_err(|e| {
            Error::invalid_arg(format!("warmup sample '{}': {}", setting.name, e.message))
        })?;
        samples.push(WarmupSample {
            name: setting.name.clone(),
            count: setting.count.max(1),
            requests: vec![request; setting.batch_size as usize],
        });
    }
    Ok(samples)
}

/// Runs every sample on `instance`; the first failing sample is the error.
pub(crate) fn run(instance: &mut dyn ModelInstance, samples: &[WarmupSample]) -> Result<()> {
    for sample in samples {
        for _ in 0..sample.count {
            run_once(instance, sample)?;
        }
    }
    Ok(())
}

fn run_once(instance: &mut dyn ModelInstance, sample: &WarmupSample) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    let requests = sample
        .requests
        .iter()
        .map(|(request, outputs)| BackendRequest {
            request: request.clone(),
            requested_outputs: outputs.clone(),
            sink: ResponseSink::new(Box::new(Collect(tx.clone())), CancelFlag::default()),
            trace: None,
        })
        .collect();
    drop(tx);
    instance.execute(requests, &mut ComputeTiming::default());
    // Every sink sends its outcome when it finishes (or is dropped).
    let errors: Vec<String> = rx.iter().filter_map(|r| r.err()).collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(Error::invalid_arg(format!(
        "failed to run warmup sample '{}': {}",
        sample.name,
        errors.join("; ")
    )))
}

/// Reports a request's first error, or success, when its last response comes.
struct Collect(mpsc::Sender<std::result::Result<(), String>>);

impl ResponseTarget for Collect {
    fn deliver(&mut self, event: ResponseEvent) {
        match event.response {
            Some(Err(e)) => {
                let _ = self.0.send(Err(e.message));
            }
            _ if event.is_final => {
                let _ = self.0.send(Ok(()));
            }
            _ => {}
        }
    }
}

/// One request of a sample (batch 1), validated as a client's would be;
/// inputs that are not model inputs (control tensors) are passed as given.
fn sample_request(
    config: &ModelConfig,
    model_path: &Path,
    setting: &ModelWarmup,
) -> Result<(InferRequest, Vec<String>)> {
    let batching = BatchPlan::of(config).is_batching();
    let mut inputs = Vec::new();
    let mut extra = Vec::new();
    let mut names: Vec<&String> = setting.inputs.keys().collect();
    names.sort();
    for name in names {
        let input = &setting.inputs[name];
        let is_model_input = config.input.iter().any(|i| i.name == *name);
        let datatype = DataType::from_config_number(input.data_type)
            .ok_or_else(|| Error::invalid_arg(format!("input '{name}' has no valid data_type")))?;
        if input.dims.iter().any(|&d| d < 0) {
            return Err(Error::invalid_arg(format!(
                "warmup setting expects all variable-size dimensions are specified for input '{name}'"
            )));
        }
        let mut shape: Vec<i64> = Vec::with_capacity(input.dims.len() + 1);
        if batching && is_model_input {
            shape.push(1);
        }
        shape.extend(&input.dims);
        let data = input_data(
            model_path,
            name,
            datatype,
            &input.dims,
            &input.input_data_type,
        )?;
        let tensor = Tensor::new(name.clone(), datatype, shape, data);
        if is_model_input {
            inputs.push(tensor);
        } else {
            extra.push(tensor);
        }
    }
    let request = InferRequest {
        model_name: config.name.clone(),
        id: String::new(),
        inputs,
        ..Default::default()
    };
    let mut valid = validate(config, request)?;
    valid.request.inputs.extend(extra);
    Ok((valid.request, valid.requested_outputs))
}

fn input_data(
    model_path: &Path,
    name: &str,
    datatype: DataType,
    dims: &[i64],
    how: &Option<InputDataType>,
) -> Result<Bytes> {
    let elements = dims.iter().product::<i64>().max(0) as usize;
    // BYTES elements are a 4-byte length and no data: empty strings.
    let byte_size = datatype.element_size().unwrap_or(4) * elements;
    match how {
        Some(InputDataType::ZeroData(_)) => Ok(Bytes::from(vec![0u8; byte_size])),
        Some(InputDataType::RandomData(_)) if datatype == DataType::Bytes => {
            Ok(Bytes::from(vec![0u8; byte_size]))
        }
        Some(InputDataType::RandomData(_)) => Ok(Bytes::from(random_bytes(byte_size))),
        Some(InputDataType::InputDataFile(file)) => {
            let path = model_path.join(WARMUP_FOLDER).join(file);
            let data = std::fs::read(&path).map_err(|e| {
                Error::invalid_arg(format!(
                    "cannot read input data file '{}' for input '{name}': {e}",
                    path.display()
                ))
            })?;
            if datatype != DataType::Bytes && data.len() < byte_size {
                return Err(Error::invalid_arg(format!(
                    "warmup setting expects {byte_size} bytes for input '{name}', but the data \
                     provided from {file} only has {} bytes",
                    data.len()
                )));
            }
            let used = if datatype == DataType::Bytes {
                data.len()
            } else {
                byte_size
            };
            Ok(Bytes::from(data).slice(..used))
        }
        None => Err(Error::invalid_arg(format!(
            "warmup setting expects input '{name}' to have input_data_type set"
        ))),
    }
}

/// Bytes from a xorshift generator seeded by the clock: warmup data needs
/// no quality, only values that are not all zero.
fn random_bytes(n: usize) -> Vec<u8> {
    let mut state = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0x9E37_79B9_7F4A_7C15, |d| d.as_nanos() as u64)
        | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect()
}
