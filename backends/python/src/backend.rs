//! The Python backend (`backend: "python"`): loading a model's versions,
//! auto-completing their configurations, and creating their instances.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend::{
    AutoCompleteContext, Backend, InstanceContext, Model, ModelContext, ModelInstance,
};
use oxiserve_config::{from_json, to_json};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

use crate::{
    autocomplete,
    instance::PythonInstance,
    interpreter,
    lane::takes_direct_calls,
    model::{PythonModel, Shared, pipeline_depth},
    settings::PythonSettings,
};

/// The Python backend (`backend: "python"`).
#[derive(Debug, Clone, Default)]
pub struct PythonBackend {
    shared: Arc<Shared>,
}

impl PythonBackend {
    /// A backend with these settings.
    pub fn new(settings: PythonSettings) -> Self {
        Self {
            shared: Arc::new(Shared::new(settings)),
        }
    }

    fn python_for(&self, config: &ModelConfig, model_path: &Path) -> Result<PathBuf> {
        interpreter::find(
            config,
            model_path,
            self.shared.settings.interpreter.as_deref(),
        )
    }
}

/// The file holding the model's `TritonPythonModel` in `version_path`.
fn model_file(config: &ModelConfig, version_path: &Path) -> PathBuf {
    let name = if config.default_model_filename.is_empty() {
        "model.py"
    } else {
        &config.default_model_filename
    };
    version_path.join(name)
}

impl Backend for PythonBackend {
    fn name(&self) -> &str {
        "python"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        let python = self.python_for(&model.config, &model.model_path)?;
        // Fails the load now if this Python cannot run models.
        self.shared.zygote(&python)?;
        let model_file = model_file(&model.config, &model.version_path);
        if !model_file.is_file() {
            return Err(Error::invalid_arg(format!(
                "python model file {} does not exist",
                model_file.display()
            )));
        }
        let args = vec![
            ("model_config".into(), to_json(&model.config).to_string()),
            (
                "model_repository".into(),
                model.model_path.display().to_string(),
            ),
            ("model_version".into(), model.version.to_string()),
            ("model_name".into(), model.name.clone()),
        ];
        Ok(Arc::new(ModelHandle(Arc::new(PythonModel {
            backend: self.shared.clone(),
            name: model.name.clone(),
            version: model.version,
            settings: self.shared.settings.clone(),
            python,
            model_file,
            args,
            decoupled: model
                .config
                .model_transaction_policy
                .as_ref()
                .is_some_and(|p| p.decoupled),
            host: model.host.clone(),
            pipeline_depth: pipeline_depth(&model.config),
            takes_direct_calls: takes_direct_calls(&model.config),
        }))))
    }

    fn auto_complete(
        &self,
        model: &AutoCompleteContext,
        config: ModelConfig,
    ) -> Result<ModelConfig> {
        let Some(version_path) = &model.version_path else {
            return Ok(config);
        };
        let file = model_file(&config, version_path);
        if !file.is_file() {
            return Ok(config);
        }
        // Without a usable Python the load of each version fails, saying why.
        let Ok(python) = self.python_for(&config, &model.model_path) else {
            return Ok(config);
        };
        let Ok(zygote) = self.shared.zygote(&python) else {
            return Ok(config);
        };
        let json = autocomplete::run(
            &zygote,
            &self.shared.settings,
            &file,
            &to_json(&config).to_string(),
        )?;
        from_json(&json).map_err(|e| {
            Error::invalid_arg(format!(
                "auto_complete_config of model '{}' returned an invalid configuration: {e}",
                model.name
            ))
        })
    }
}

struct ModelHandle(Arc<PythonModel>);

impl Model for ModelHandle {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(PythonInstance::create(self.0.clone(), instance)?))
    }

    /// Executing a batch writes it to the stub's arena and socket; it waits
    /// only for a process that holds a full pipeline, which an instance that
    /// is ready inline does not.
    fn executes_inline(&self) -> bool {
        self.0.pipeline_depth > 1
    }
}
