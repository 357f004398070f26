//! The `onnxruntime` backend (`platform: "onnxruntime_onnx"`): `model.onnx`
//! files run by the ONNX Runtime library, which is loaded when the first ONNX
//! model loads (see [`runtime`] for where it is looked for). Without the
//! library, ONNX models fail to load saying how to install it; every other
//! backend keeps serving.
//!
//! One session per model instance; the configuration is checked against the
//! model's real signature at load, and auto-completed from it, as Triton's
//! onnxruntime backend does.

mod dtype;
mod inputs;
mod instance;
mod model;
mod options;
mod outputs;
mod runtime;
mod settings;
mod signature;

use std::sync::Arc;

use ort::environment::Environment;
use oxiserve_backend::{AutoCompleteContext, Backend, InstanceKind, Model, ModelContext};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

pub use settings::OnnxSettings;

use crate::{
    model::{OnnxModel, model_file, open},
    options::SessionOptions,
    signature::Signature,
};

/// The backend called `onnxruntime`.
pub struct OnnxBackend {
    settings: OnnxSettings,
}

impl OnnxBackend {
    /// A backend with these settings; the library is loaded on first use,
    /// once per process (the first backend's settings pick it).
    pub fn new(settings: OnnxSettings) -> Self {
        Self { settings }
    }

    fn environment(&self) -> Result<&'static Environment> {
        runtime::environment(&self.settings).map_err(Error::unavailable)
    }
}

impl Backend for OnnxBackend {
    fn name(&self) -> &str {
        "onnxruntime"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        let environment = self.environment()?;
        Ok(Arc::new(OnnxModel::load(
            environment,
            model,
            self.settings.global_thread_pool,
        )?))
    }

    fn auto_complete(
        &self,
        model: &AutoCompleteContext,
        mut config: ModelConfig,
    ) -> Result<ModelConfig> {
        if !config.input.is_empty() && !config.output.is_empty() {
            return Ok(config);
        }
        // Without a version or the library, the load itself says what is wrong.
        let Some(version_path) = &model.version_path else {
            return Ok(config);
        };
        let file = model_file(&config, version_path);
        let Ok(environment) = self.environment() else {
            return Ok(config);
        };
        if !file.is_file() {
            return Ok(config);
        }
        let options = SessionOptions::probe(&model.name);
        let session = open(
            environment,
            &options,
            &file,
            InstanceKind::Cpu,
            0,
            &model.name,
        )?;
        let signature = Signature::of(&session, &model.name)?;
        config.name = model.name.clone();
        signature.complete(&mut config, self.settings.default_max_batch_size)?;
        Ok(config)
    }

    fn check(&self, model: &ModelContext) -> Result<()> {
        let environment = self.environment()?;
        let file = model_file(&model.config, &model.version_path);
        let session = open(
            environment,
            &SessionOptions::probe(&model.name),
            &file,
            InstanceKind::Cpu,
            0,
            &model.name,
        )?;
        Signature::of(&session, &model.name)?.check(&model.config)
    }
}
