//! The `tensorflow` backend (`platform: "tensorflow_savedmodel"` with a
//! `model.savedmodel/` folder, `"tensorflow_graphdef"` with a
//! `model.graphdef` file): models run through TensorFlow's C API, whose
//! library is opened when the first TensorFlow model loads (see [`library`]
//! for where it is looked for). Without the library, TensorFlow models fail
//! to load saying how to install it; every other backend keeps serving.
//!
//! As in Triton's tensorflow backend, a SavedModel serves one signature
//! (`serving_default` or `TF_SIGNATURE_DEF`) whose keys are the tensor
//! names clients use; the configuration is checked against it at load and
//! auto-completed from it. A GraphDef's inputs are its placeholders and its
//! outputs its operations, by name.

mod autocomplete;
mod capi;
mod check;
mod dtype;
mod instance;
mod library;
mod meta_graph;
mod model;
mod parameters;
mod session;
mod settings;
mod signature;
mod tensor;

use std::sync::Arc;

use oxiserve_backend::{AutoCompleteContext, Backend, Model, ModelContext};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

pub use settings::TfSettings;

use crate::{
    capi::Api,
    model::{ModelSource, TfModel},
};

/// The backend called `tensorflow`.
pub struct TfBackend {
    settings: TfSettings,
}

impl TfBackend {
    /// A backend with these settings; the library is opened on first use,
    /// once per process (the first backend's settings pick it).
    pub fn new(settings: TfSettings) -> Self {
        Self { settings }
    }

    fn api(&self) -> Result<&'static Api> {
        library::api(self.settings.library_path.as_deref()).map_err(Error::unavailable)
    }
}

impl Backend for TfBackend {
    fn name(&self) -> &str {
        "tensorflow"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        let api = self.api()?;
        Ok(Arc::new(TfModel::load(
            api,
            model,
            self.settings.allow_soft_placement,
        )?))
    }

    fn auto_complete(
        &self,
        model: &AutoCompleteContext,
        mut config: ModelConfig,
    ) -> Result<ModelConfig> {
        // A GraphDef carries nothing to complete from; without a version,
        // a SavedModel or the library, the load itself says what is wrong.
        if config.platform != "tensorflow_savedmodel" {
            return Ok(config);
        }
        let Some(version_path) = &model.version_path else {
            return Ok(config);
        };
        config.name = model.name.clone();
        let source = ModelSource::of(
            &config,
            version_path,
            &model.model_path,
            self.settings.allow_soft_placement,
        )?;
        if !source.path.is_dir() {
            return Ok(config);
        }
        let Ok(api) = self.api() else {
            return Ok(config);
        };
        let (_, signature) = source.open(api).map_err(|e| {
            Error::internal(format!(
                "unable to auto-complete model configuration for '{}', failed to load model: {}",
                model.name, e.message
            ))
        })?;
        signature.complete(&mut config, self.settings.default_max_batch_size)?;
        Ok(config)
    }

    fn check(&self, model: &ModelContext) -> Result<()> {
        let api = self.api()?;
        let source = ModelSource::of(
            &model.config,
            &model.version_path,
            &model.model_path,
            self.settings.allow_soft_placement,
        )?;
        let (_, signature) = source.open(api)?;
        signature.check(&model.config)
    }
}
