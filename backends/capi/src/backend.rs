//! A backend library as an oxiserve [`Backend`]. Auto-complete initializes
//! the model with `TRITONBACKEND_ModelAutoCompleteConfig` true and takes the
//! configuration it sets (`TRITONBACKEND_ModelSetConfig`); the model stays
//! initialized and is the one the load of that version then serves, so
//! that, as in Triton, a model version is initialized once.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend::{
    AutoCompleteContext, Backend, InstanceContext, Model, ModelContext, ModelInstance, NoHost,
};
use oxiserve_proto::ModelConfig;
use oxiserve_types::Result;
use parking_lot::Mutex;

use crate::{
    instance::CapiInstance,
    library::BackendHandle,
    metrics,
    model::{ModelHandle, ModelSpec},
};

/// Models initialized by auto-complete, by (model folder, version), until
/// their load takes them.
pub type Completed = Mutex<HashMap<(PathBuf, i64), Arc<ModelHandle>>>;

/// The models of one library.
#[derive(Debug)]
pub struct CapiBackend {
    library: Arc<BackendHandle>,
    name: String,
    /// Whether the server auto-completes configurations.
    auto_complete: bool,
    completed: Arc<Completed>,
}

impl CapiBackend {
    /// The backend `library` provides; `completed` is shared by every
    /// backend of the loader.
    pub fn new(
        library: Arc<BackendHandle>,
        auto_complete: bool,
        completed: Arc<Completed>,
    ) -> Self {
        Self {
            name: library.name(),
            library,
            auto_complete,
            completed,
        }
    }

    /// The model auto-complete initialized for this version, if any.
    fn completed(&self, model_path: &Path, version: i64) -> Option<Arc<ModelHandle>> {
        let key = (model_path.to_path_buf(), version);
        let handle = self.completed.lock().remove(&key)?;
        Arc::ptr_eq(&handle.backend, &self.library).then_some(handle)
    }
}

impl Backend for CapiBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        metrics::serve_from(model.host.custom_metrics());
        let config = model.config.as_ref().clone();
        if let Some(handle) = self.completed(&model.model_path, model.version) {
            handle.adopt(config, model.host.clone());
            return Ok(Arc::new(CapiModel(handle)));
        }
        let handle = ModelHandle::initialize(
            &self.library,
            ModelSpec {
                name: &model.name,
                version: model.version,
                config,
                model_path: &model.model_path,
                auto_complete: self.auto_complete,
                host: model.host.clone(),
            },
        )?;
        Ok(Arc::new(CapiModel(handle)))
    }

    fn auto_complete(
        &self,
        model: &AutoCompleteContext,
        config: ModelConfig,
    ) -> Result<ModelConfig> {
        let version = model
            .version_path
            .as_deref()
            .and_then(version_of)
            .unwrap_or(1);
        let handle = ModelHandle::initialize(
            &self.library,
            ModelSpec {
                name: &model.name,
                version,
                config: config.clone(),
                model_path: &model.model_path,
                auto_complete: true,
                host: Arc::new(NoHost),
            },
        )?;
        let completed = handle.set_config().unwrap_or(config);
        let key = (model.model_path.clone(), version);
        // An earlier one of the same version, never loaded, is finalized now.
        let earlier = self.completed.lock().insert(key, handle);
        drop(earlier);
        Ok(completed)
    }
}

/// A loaded model: its instances are made on their own threads.
#[derive(Debug)]
struct CapiModel(Arc<ModelHandle>);

impl Model for CapiModel {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(CapiInstance::create(self.0.clone(), instance)?))
    }
}

/// The version a version folder's name gives.
fn version_of(path: &Path) -> Option<i64> {
    path.file_name()?.to_str()?.parse().ok()
}
