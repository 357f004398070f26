//! One loaded version of an OpenVINO model: read, shaped for batching,
//! checked against its configuration, and compiled once for its device;
//! each instance gets its own infer request on the compiled model.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use openvino::{CompiledModel, Core, DeviceType, Dimension, Model, PartialShape, RwPropertyKey};
use oxiserve_backend::{
    InstanceContext, InstanceKind, Model as ServedModel, ModelContext, ModelInstance,
};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{ModelConfig, inference::model_instance_group::Kind};
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use crate::{
    error::describe,
    instance::{OpenVinoInstance, Plan},
    parameters::ModelParameters,
    signature::Signature,
};

/// An OpenVINO model whose configuration matched its file.
pub(crate) struct OpenVinoModel {
    /// Infer requests are created from it, one per instance.
    compiled: Mutex<CompiledModel>,
    plan: Arc<Plan>,
}

impl OpenVinoModel {
    /// Reads, shapes, checks and compiles the model.
    pub(crate) fn load(model: &ModelContext) -> Result<Self> {
        let config = &model.config;
        refuse_unsupported(config)?;
        let parameters = ModelParameters::of(config)?;
        let (mut core, mut network) = read(config, &model.version_path, &model.name)?;
        let signature = shape(&mut network, config, &parameters)?;
        signature.check(config)?;
        let device = DeviceType::Other(parameters.device.clone().into());
        for (key, value) in &parameters.properties {
            core.set_property(&device, &RwPropertyKey::Other((*key).into()), value)
                .map_err(|e| {
                    Error::invalid_arg(format!(
                        "unable to load model '{}': OpenVINO refused {key}={value} for device {}: {}",
                        model.name,
                        parameters.device,
                        describe(&e)
                    ))
                })?;
        }
        let compiled = core.compile_model(&network, device).map_err(|e| {
            Error::internal(format!(
                "unable to load model '{}': OpenVINO could not compile it for device {}: {}",
                model.name,
                parameters.device,
                describe(&e)
            ))
        })?;
        let batch = BatchPlan::of(config);
        Ok(Self {
            compiled: Mutex::new(compiled),
            plan: Arc::new(Plan {
                model: model.name.clone(),
                batching: batch.is_batching(),
                fixed_batch: (batch.is_batching() && parameters.fixed_batch)
                    .then(|| usize::try_from(config.max_batch_size).unwrap_or(0)),
                batch_padding: parameters.batch_padding,
                outputs: config.output.iter().map(|o| o.name.clone()).collect(),
            }),
        })
    }
}

impl ServedModel for OpenVinoModel {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        if instance.kind != InstanceKind::Cpu {
            return Err(only_cpu(&self.plan.model));
        }
        let request = self.compiled.lock().create_infer_request().map_err(|e| {
            Error::internal(format!(
                "openvino: model '{}': creating infer request object: {}",
                self.plan.model,
                describe(&e)
            ))
        })?;
        Ok(Box::new(OpenVinoInstance {
            request,
            plan: self.plan.clone(),
            inputs: HashMap::new(),
        }))
    }
}

/// The model's file: `default_model_filename` (or `model.xml`) in the
/// version folder.
pub(crate) fn model_file(config: &ModelConfig, version_path: &Path) -> PathBuf {
    let name = if config.default_model_filename.is_empty() {
        "model.xml"
    } else {
        &config.default_model_filename
    };
    version_path.join(name)
}

/// A new core and the model read from the version's file (an IR's weights
/// are the `.bin` beside its `.xml`).
pub(crate) fn read(config: &ModelConfig, version_path: &Path, name: &str) -> Result<(Core, Model)> {
    let file = model_file(config, version_path);
    if !file.exists() {
        return Err(Error::unavailable(format!(
            "unable to find '{}' for model '{name}'",
            file.display()
        )));
    }
    let mut core =
        Core::new().map_err(|e| Error::unavailable(format!("openvino: model '{name}': {e}")))?;
    let network = core
        .read_model_from_file(&file.to_string_lossy(), "")
        .map_err(|e| {
            Error::invalid_arg(format!(
                "unable to load model '{name}': OpenVINO could not read {}: {}",
                file.display(),
                describe(&e)
            ))
        })?;
    Ok((core, network))
}

/// Reshapes the model's inputs as the configuration asks: to the configured
/// dims with `RESHAPE_IO_LAYERS`, and with batching a batch dimension that is
/// dynamic, or `max_batch_size` with `SKIP_OV_DYNAMIC_BATCHSIZE`. Returns
/// the signature after reshaping.
fn shape(
    network: &mut Model,
    config: &ModelConfig,
    parameters: &ModelParameters,
) -> Result<Signature> {
    let model = &config.name;
    let signature = Signature::of(network, model)?;
    let batch = BatchPlan::of(config);
    let mut targets = Vec::new();
    for input in &signature.inputs {
        let mut target = input.dims.clone();
        if parameters.reshape_io
            && let Some(configured) = config.input.iter().find(|i| i.name == input.name)
        {
            let dims = configured
                .reshape
                .as_ref()
                .map_or(&configured.dims, |r| &r.shape);
            target = batch.full_shape(dims);
        }
        if batch.is_batching() && !target.is_empty() {
            target[0] = if parameters.fixed_batch {
                i64::from(config.max_batch_size)
            } else {
                -1
            };
        }
        if target != input.dims {
            targets.push((input.name.clone(), target));
        }
    }
    if targets.is_empty() {
        return Ok(signature);
    }
    let shapes = targets
        .iter()
        .map(|(name, dims)| {
            let dimensions: Vec<Dimension> = dims
                .iter()
                .map(|&d| {
                    if d < 0 {
                        Dimension::new(-1, -1)
                    } else {
                        Dimension::new(d, d)
                    }
                })
                .collect();
            PartialShape::new(dims.len() as i64, &dimensions)
                .map(|shape| (name.as_str(), shape))
                .map_err(|e| {
                    Error::internal(format!(
                        "openvino: model '{model}', input '{name}': {}",
                        describe(&e)
                    ))
                })
        })
        .collect::<Result<Vec<_>>>()?;
    let pairs: Vec<(&str, &PartialShape)> = shapes.iter().map(|(n, s)| (*n, s)).collect();
    network.reshape(&pairs).map_err(|e| {
        let wanted: Vec<String> = targets
            .iter()
            .map(|(name, dims)| format!("'{name}' to {}", oxiserve_types::format_shape(dims)))
            .collect();
        Error::invalid_arg(format!(
            "unable to load model '{model}': OpenVINO could not reshape input {}: {}",
            wanted.join(", "),
            describe(&e)
        ))
    })?;
    Signature::of(network, model)
}

/// Batch inputs and outputs, and instances on other than the CPU, are not
/// served (the latter as in Triton).
fn refuse_unsupported(config: &ModelConfig) -> Result<()> {
    if !config.batch_input.is_empty() || !config.batch_output.is_empty() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "model '{}': batch_input and batch_output (ragged batching) are not supported by \
                 oxiserve's openvino backend",
                config.name
            ),
        ));
    }
    if config
        .instance_group
        .iter()
        .any(|g| g.kind != Kind::Cpu as i32 && g.kind != Kind::Auto as i32)
    {
        return Err(only_cpu(&config.name));
    }
    Ok(())
}

fn only_cpu(model: &str) -> Error {
    Error::invalid_arg(format!(
        "unable to load model '{model}', Triton OpenVINO backend supports only Kind CPU and AUTO"
    ))
}
