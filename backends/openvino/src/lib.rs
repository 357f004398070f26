//! The `openvino` backend: `model.xml` + `model.bin` (or any file OpenVINO
//! reads, such as `model.onnx`) run by the OpenVINO runtime, whose C library
//! is loaded when the first OpenVINO model loads (see [`runtime`] for where
//! it is looked for). Without the library, OpenVINO models fail to load
//! saying how to install it; every other backend keeps serving.
//!
//! The model is compiled once per model version, with the OpenVINO
//! properties of its `parameters`; each instance runs its own infer request.
//! The configuration is checked against the model's real inputs and outputs
//! at load, and auto-completed from them, as Triton's OpenVINO backend does.

mod dtype;
mod error;
mod instance;
mod model;
mod parameters;
mod runtime;
mod settings;
mod signature;

use std::sync::Arc;

use oxiserve_backend::{AutoCompleteContext, Backend, Model, ModelContext};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

pub use settings::OpenVinoSettings;

use crate::{
    model::{OpenVinoModel, model_file, read},
    signature::Signature,
};

/// The backend called `openvino`.
pub struct OpenVinoBackend {
    settings: OpenVinoSettings,
}

impl OpenVinoBackend {
    /// A backend with these settings; the library is loaded on first use,
    /// once per process (the first backend's settings pick it).
    pub fn new(settings: OpenVinoSettings) -> Self {
        Self { settings }
    }

    fn runtime(&self) -> Result<()> {
        runtime::load(&self.settings).map_err(Error::unavailable)
    }
}

impl Backend for OpenVinoBackend {
    fn name(&self) -> &str {
        "openvino"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        self.runtime()?;
        Ok(Arc::new(OpenVinoModel::load(model)?))
    }

    fn auto_complete(
        &self,
        model: &AutoCompleteContext,
        mut config: ModelConfig,
    ) -> Result<ModelConfig> {
        if !config.input.is_empty() && !config.output.is_empty() {
            log::info!(
                "skipping model configuration auto-complete for '{}': inputs and outputs already \
                 specified",
                model.name
            );
            return Ok(config);
        }
        // Without a version, a file or the library, the load says what is wrong.
        let Some(version_path) = &model.version_path else {
            return Ok(config);
        };
        if !model_file(&config, version_path).exists() || self.runtime().is_err() {
            return Ok(config);
        }
        config.name = model.name.clone();
        let (_core, network) = read(&config, version_path, &model.name)?;
        let signature = Signature::of(&network, &model.name)?;
        signature.complete(&mut config, self.settings.default_max_batch_size)?;
        Ok(config)
    }

    fn check(&self, model: &ModelContext) -> Result<()> {
        self.runtime()?;
        OpenVinoModel::load(model).map(drop)
    }
}
