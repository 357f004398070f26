//! The Python backend and its models.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use oxiserve_backend::{
    AutoCompleteContext, Backend, InstanceContext, Model, ModelContext, ModelHost, ModelInstance,
};
use oxiserve_config::{from_json, to_json};
use oxiserve_proto::{
    ModelConfig,
    inference::{ModelQueuePolicy, model_config::SchedulingChoice},
};
use oxiserve_types::{Error, Result};

use crate::{
    autocomplete, instance::PythonInstance, interpreter, package::package_dir,
    settings::PythonSettings, zygote::Zygote,
};

/// The Python backend (`backend: "python"`).
#[derive(Debug, Clone, Default)]
pub struct PythonBackend {
    shared: Arc<Shared>,
}

/// What every model of the backend shares: its settings and one zygote per
/// interpreter.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub settings: PythonSettings,
    zygotes: Mutex<HashMap<PathBuf, Arc<Zygote>>>,
}

impl Shared {
    /// The zygote for `python`, started (or restarted) when needed.
    pub fn zygote(&self, python: &Path) -> Result<Arc<Zygote>> {
        let mut zygotes = self.zygotes.lock().unwrap();
        if let Some(zygote) = zygotes.get(python).filter(|z| z.is_alive()) {
            return Ok(zygote.clone());
        }
        let zygote = Arc::new(Zygote::start(
            python,
            package_dir()?,
            self.settings.stub_timeout,
        )?);
        log::info!(
            "python backend: {} ready to fork model instances ({})",
            zygote.python().display(),
            zygote.versions
        );
        zygotes.insert(python.to_path_buf(), zygote.clone());
        Ok(zygote)
    }
}

impl PythonBackend {
    /// A backend with these settings.
    pub fn new(settings: PythonSettings) -> Self {
        Self {
            shared: Arc::new(Shared {
                settings,
                zygotes: Mutex::default(),
            }),
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

/// One loaded version of a Python model.
pub(crate) struct PythonModel {
    pub backend: Arc<Shared>,
    pub settings: PythonSettings,
    pub python: PathBuf,
    pub model_file: PathBuf,
    /// `initialize` arguments shared by every instance.
    pub args: Vec<(String, String)>,
    pub decoupled: bool,
    pub host: Arc<dyn ModelHost>,
    /// Batches a process holds at once (see [`pipeline_depth`]).
    pub pipeline_depth: usize,
}

/// How many batches an instance's process may hold at once. With two, the
/// next batch already waits in the stub's socket while it computes one, so
/// it never idles between batches. But a batch sent early has left the
/// scheduler's queue: where queue timeouts or priorities decide what runs
/// next, batches go one at a time, as in Triton.
fn pipeline_depth(config: &ModelConfig) -> usize {
    let timed = |p: &ModelQueuePolicy| p.default_timeout_microseconds > 0;
    match &config.scheduling_choice {
        None => 2,
        Some(SchedulingChoice::DynamicBatching(batching)) => {
            let ordered = batching.priority_levels > 1
                || batching.default_queue_policy.as_ref().is_some_and(timed)
                || batching.priority_queue_policy.values().any(timed);
            if ordered { 1 } else { 2 }
        }
        Some(_) => 1,
    }
}

struct ModelHandle(Arc<PythonModel>);

impl Model for ModelHandle {
    fn create_instance(&self, instance: &InstanceContext) -> Result<Box<dyn ModelInstance>> {
        Ok(Box::new(PythonInstance::create(self.0.clone(), instance)?))
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelDynamicBatching;

    use super::*;

    fn batching(b: ModelDynamicBatching) -> ModelConfig {
        ModelConfig {
            scheduling_choice: Some(SchedulingChoice::DynamicBatching(b)),
            ..Default::default()
        }
    }

    #[test]
    fn batches_are_pipelined_unless_the_queue_decides_the_order() {
        assert_eq!(pipeline_depth(&ModelConfig::default()), 2);
        assert_eq!(
            pipeline_depth(&batching(ModelDynamicBatching::default())),
            2
        );
        let prioritized = ModelDynamicBatching {
            priority_levels: 2,
            ..Default::default()
        };
        assert_eq!(pipeline_depth(&batching(prioritized)), 1);
        let timed = ModelDynamicBatching {
            default_queue_policy: Some(ModelQueuePolicy {
                default_timeout_microseconds: 1000,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(pipeline_depth(&batching(timed)), 1);
    }
}
