//! One loaded version of an ONNX model: its file, session options and the
//! session opened at load time to check the configuration.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use ort::{environment::Environment, session::Session};
use oxiserve_backend::{InstanceContext, InstanceKind, Model, ModelContext, ModelInstance};
use oxiserve_config::BatchPlan;
use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_instance_group::Kind},
};
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use crate::{
    instance::{OnnxInstance, Plan},
    options::SessionOptions,
    signature::Signature,
};

/// An ONNX model whose configuration matched its file.
pub(crate) struct OnnxModel {
    environment: Environment,
    options: SessionOptions,
    file: PathBuf,
    plan: Arc<Plan>,
    /// The session opened by `load`, kept for the first instance of the same
    /// kind and device.
    first: Mutex<Option<(InstanceKind, i32, Session)>>,
}

impl OnnxModel {
    /// Opens the model's file and checks its configuration against it.
    pub(crate) fn load(
        environment: &Environment,
        model: &ModelContext,
        use_global_pool: bool,
    ) -> Result<Self> {
        let config = &model.config;
        if !config.batch_input.is_empty() || !config.batch_output.is_empty() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "model '{}': batch_input and batch_output (ragged batching) are not supported \
                     by oxiserve's onnxruntime backend yet",
                    model.name
                ),
            ));
        }
        let options = SessionOptions::from_config(config, use_global_pool)?;
        let file = model_file(config, &model.version_path);
        let (kind, device) = first_instance(config);
        let session = open(environment, &options, &file, kind, device, &model.name)?;
        Signature::of(&session, &model.name)?.check(config)?;
        Ok(Self {
            environment: environment.clone(),
            options,
            file,
            plan: Arc::new(Plan {
                model: model.name.clone(),
                batching: BatchPlan::of(config).is_batching(),
                outputs: output_names(config),
            }),
            first: Mutex::new(Some((kind, device, session))),
        })
    }
}

impl Model for OnnxModel {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        let mut first = self.first.lock();
        let session = match first.take() {
            Some((kind, device, session))
                if kind == instance.kind && device == instance.device_id =>
            {
                session
            }
            _ => open(
                &self.environment,
                &self.options,
                &self.file,
                instance.kind,
                instance.device_id,
                &self.plan.model,
            )?,
        };
        Ok(Box::new(OnnxInstance {
            session,
            plan: self.plan.clone(),
        }))
    }
}

/// The model's file: `default_model_filename` (or `model.onnx`) in the
/// version folder; a folder of that name holds a `model.onnx`.
pub(crate) fn model_file(config: &ModelConfig, version_path: &Path) -> PathBuf {
    let name = if config.default_model_filename.is_empty() {
        "model.onnx"
    } else {
        &config.default_model_filename
    };
    let path = version_path.join(name);
    if path.is_dir() {
        path.join("model.onnx")
    } else {
        path
    }
}

/// The outputs an instance produces: the configured ones, then the
/// sequence batcher's state outputs (which the core keeps between requests).
fn output_names(config: &ModelConfig) -> Vec<String> {
    let mut names: Vec<String> = config.output.iter().map(|o| o.name.clone()).collect();
    if let Some(SchedulingChoice::SequenceBatching(batching)) = &config.scheduling_choice {
        for state in &batching.state {
            if !names.contains(&state.output_name) {
                names.push(state.output_name.clone());
            }
        }
    }
    names
}

/// Opens a session on `file` for an instance of `kind`.
pub(crate) fn open(
    environment: &Environment,
    options: &SessionOptions,
    file: &Path,
    kind: InstanceKind,
    device: i32,
    model: &str,
) -> Result<Session> {
    if !file.is_file() {
        return Err(Error::unavailable(format!(
            "unable to find '{}' for model instance '{model}'",
            file.display()
        )));
    }
    options
        .builder(environment, kind, device)?
        .commit_from_file(file)
        .map_err(|e| {
            Error::internal(format!(
                "onnxruntime: model '{model}': could not load {}: {e}",
                file.display()
            ))
        })
}

/// The kind and device of the model's first instance.
fn first_instance(config: &ModelConfig) -> (InstanceKind, i32) {
    let group = config.instance_group.first();
    let gpu = group.is_some_and(|g| g.kind == Kind::Gpu as i32);
    if gpu {
        (
            InstanceKind::Gpu,
            group.and_then(|g| g.gpus.first().copied()).unwrap_or(0),
        )
    } else {
        (InstanceKind::Cpu, 0)
    }
}
