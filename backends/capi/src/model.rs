//! One loaded model version: the object behind `TRITONBACKEND_Model*`,
//! initialized with `TRITONBACKEND_ModelInitialize` and finalized with
//! `TRITONBACKEND_ModelFinalize` once its last instance is gone.

use std::{
    ffi::{CString, c_void},
    path::Path,
    ptr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicPtr, Ordering},
    },
};

use oxiserve_backend::ModelHost;
use oxiserve_config::{from_json, normalize};
use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};
use oxiserve_types::{Error, Result};
use parking_lot::Mutex;

use crate::{
    ffi::{c_path, c_string},
    library::{BackendHandle, call_entry_point, load_failure},
    model_info::ModelInfo,
    server::ServerHandle,
};

/// What a model is initialized with.
pub struct ModelSpec<'a> {
    pub name: &'a str,
    pub version: i64,
    pub config: ModelConfig,
    /// The model's folder (`TRITONBACKEND_ModelRepository`).
    pub model_path: &'a Path,
    /// Whether the backend may complete the configuration
    /// (`TRITONBACKEND_ModelAutoCompleteConfig`).
    pub auto_complete: bool,
    pub host: Arc<dyn ModelHost>,
}

/// The object behind a `TRITONBACKEND_Model*`.
#[derive(Debug)]
pub struct ModelHandle {
    pub name: CString,
    pub version: u64,
    pub repository: CString,
    pub auto_complete: bool,
    /// The configuration as the backend sees it; `TRITONBACKEND_ModelSetConfig` changes it.
    pub config: Mutex<ModelConfig>,
    /// Whether the backend set the configuration.
    pub config_set: AtomicBool,
    pub backend: Arc<BackendHandle>,
    pub server: ServerHandle,
    pub state: AtomicPtr<c_void>,
    info: Mutex<Arc<ModelInfo>>,
}

impl ModelHandle {
    /// Initializes the model `spec` describes with `backend`; on failure,
    /// the model is finalized (as Triton does) and the error names it.
    pub fn initialize(backend: &Arc<BackendHandle>, spec: ModelSpec<'_>) -> Result<Arc<Self>> {
        let model = Arc::new(Self {
            name: c_string(spec.name),
            version: u64::try_from(spec.version).unwrap_or(0),
            repository: c_path(spec.model_path),
            auto_complete: spec.auto_complete,
            info: Mutex::new(Arc::new(ModelInfo::of(&spec.config))),
            config: Mutex::new(spec.config),
            config_set: AtomicBool::new(false),
            backend: backend.clone(),
            server: ServerHandle::new(spec.host),
            state: AtomicPtr::new(ptr::null_mut()),
        });
        if let Some(initialize) = backend.entry.model_initialize {
            call_entry_point("TRITONBACKEND_ModelInitialize", initialize, model.as_ptr())
                .map_err(|e| load_failure(spec.name, &backend.path, e))?;
        }
        Ok(model)
    }

    /// The pointer the library knows it by.
    pub fn as_ptr(self: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(self).cast_mut().cast()
    }

    /// Its name as text.
    pub fn name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }

    /// What its requests need to know of it.
    pub fn info(&self) -> Arc<ModelInfo> {
        self.info.lock().clone()
    }

    /// Serves the model initialized for auto-complete as loaded: with its
    /// complete configuration, from `host`.
    pub fn adopt(&self, config: ModelConfig, host: Arc<dyn ModelHost>) {
        *self.info.lock() = Arc::new(ModelInfo::of(&config));
        *self.config.lock() = config;
        self.server.set_host(host);
    }

    /// The configuration the backend set, if it did.
    pub fn set_config(&self) -> Option<ModelConfig> {
        self.config_set
            .load(Ordering::Acquire)
            .then(|| self.config.lock().clone())
    }

    /// `TRITONBACKEND_ModelSetConfig`: takes the backend's batch size,
    /// inputs, outputs, scheduling (when none was set) and decoupled flag
    /// from `json`, as Triton's auto-complete does.
    pub fn update_config(&self, config_version: u32, json: &[u8]) -> Result<()> {
        check_config_version(config_version)?;
        let updated = from_json(&String::from_utf8_lossy(json)).map_err(Error::invalid_arg)?;
        let mut config = self.config.lock();
        *config = merged(&config, updated)?;
        self.config_set.store(true, Ordering::Release);
        Ok(())
    }
}

impl Drop for ModelHandle {
    fn drop(&mut self) {
        let Some(finalize) = self.backend.entry.model_finalize else {
            return;
        };
        if let Err(e) = call_entry_point(
            "TRITONBACKEND_ModelFinalize",
            finalize,
            ptr::from_mut(self).cast(),
        ) {
            log::error!("failed finalizing model '{}': {}", self.name(), e.message);
        }
    }
}

/// Triton's error for a configuration version other than 1.
pub fn check_config_version(config_version: u32) -> Result<()> {
    if config_version == 1 {
        return Ok(());
    }
    Err(Error::invalid_arg(format!(
        "model configuration version {config_version} not supported, supported versions are: 1"
    )))
}

/// `current` completed with what the backend set in `updated`.
fn merged(current: &ModelConfig, updated: ModelConfig) -> Result<ModelConfig> {
    let mut config = current.clone();
    config.max_batch_size = updated.max_batch_size;
    config.input = updated.input;
    config.output = updated.output;
    match (&config.scheduling_choice, updated.scheduling_choice) {
        (None, choice) => config.scheduling_choice = choice,
        (Some(now), Some(new)) if choice_number(now) != choice_number(&new) => {
            return Err(Error::internal(format!(
                "Cannot update scheduling choice from {} to {} when auto-completing.",
                choice_number(now),
                choice_number(&new)
            )));
        }
        _ => {}
    }
    if let Some(policy) = updated.model_transaction_policy {
        config
            .model_transaction_policy
            .get_or_insert_default()
            .decoupled = policy.decoupled;
    }
    normalize(&mut config, &[]);
    Ok(config)
}

/// The field number of a scheduling choice, as Triton's message gives it.
fn choice_number(choice: &SchedulingChoice) -> u32 {
    match choice {
        SchedulingChoice::DynamicBatching(_) => 11,
        SchedulingChoice::SequenceBatching(_) => 13,
        SchedulingChoice::EnsembleScheduling(_) => 15,
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::{
        ModelDynamicBatching, ModelInput, ModelSequenceBatching, ModelTransactionPolicy,
    };

    use super::*;

    fn input(name: &str) -> ModelInput {
        ModelInput {
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn set_config_takes_the_fields_auto_complete_may_set() {
        let current = ModelConfig {
            name: "m".into(),
            backend: "custom".into(),
            ..Default::default()
        };
        let updated = ModelConfig {
            name: "other".into(),
            max_batch_size: 8,
            input: vec![input("IN")],
            scheduling_choice: Some(SchedulingChoice::DynamicBatching(
                ModelDynamicBatching::default(),
            )),
            model_transaction_policy: Some(ModelTransactionPolicy { decoupled: true }),
            ..Default::default()
        };
        let config = merged(&current, updated).unwrap();
        assert_eq!(config.name, "m");
        assert_eq!(config.max_batch_size, 8);
        assert_eq!(config.input, vec![input("IN")]);
        assert!(matches!(
            config.scheduling_choice,
            Some(SchedulingChoice::DynamicBatching(_))
        ));
        assert!(config.model_transaction_policy.unwrap().decoupled);
    }

    #[test]
    fn set_config_may_not_change_the_scheduling_choice() {
        let current = ModelConfig {
            scheduling_choice: Some(SchedulingChoice::DynamicBatching(
                ModelDynamicBatching::default(),
            )),
            ..Default::default()
        };
        let updated = ModelConfig {
            scheduling_choice: Some(SchedulingChoice::SequenceBatching(
                ModelSequenceBatching::default(),
            )),
            ..Default::default()
        };
        assert_eq!(
            merged(&current, updated).unwrap_err().message,
            "Cannot update scheduling choice from 11 to 13 when auto-completing."
        );
    }

    #[test]
    fn only_configuration_version_1_exists() {
        assert!(check_config_version(1).is_ok());
        assert_eq!(
            check_config_version(2).unwrap_err().message,
            "model configuration version 2 not supported, supported versions are: 1"
        );
    }
}
