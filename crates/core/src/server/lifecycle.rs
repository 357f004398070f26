//! Loading and unloading models: at start-up, and on request in explicit
//! mode; the repository index.

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_backend::ModelContext;
use oxiserve_config::platform::ENSEMBLE_PLATFORM;
use oxiserve_types::{Error, Result};

use super::{ModelControlMode, Server, host::ServerHost, members};
use crate::{
    model::{LoadedModel, ModelEntry, ModelState, VersionSlot, VersionStatus},
    repository::{ModelSpec, ScanOptions, ScannedModel, scan},
};

/// One row of the repository index: a model, or one of its versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub name: String,
    /// `None` for a model with no version known (never loaded, or invalid).
    pub version: Option<i64>,
    /// `None` for a model in the repository that was never loaded.
    pub state: Option<ModelState>,
    pub reason: String,
}

/// What loading one model gave, for the start-up table.
#[derive(Debug, Clone)]
pub struct LoadOutcome {
    pub name: String,
    pub rows: Vec<IndexEntry>,
}

impl Server {
    /// Loads the models the control mode says to load at start-up. Returns the
    /// repository-level errors (an unreadable repository) if any.
    pub fn load_startup_models(&self) -> Vec<String> {
        let config = self.config();
        let only = match config.control_mode {
            ModelControlMode::Explicit => Some(config.startup_models.clone()),
            ModelControlMode::None | ModelControlMode::Poll => None,
        };
        let scan = scan(&config.repositories, &self.scan_options(only));
        for model in members::load_order(self.with_members(scan.models)) {
            self.install(model);
        }
        scan.repository_errors
    }

    /// Loads (or reloads) `name` from the repository (explicit mode only).
    /// The old versions serve until the new ones are ready.
    pub fn load_model(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "load")?;
        let scan = scan(
            &self.config().repositories,
            &self.scan_options(Some(vec![name.to_string()])),
        );
        let Some(model) = scan
            .models
            .into_iter()
            .find(|m| m.name == name && m.path.is_some())
        else {
            return Err(Error::internal(format!(
                "failed to load '{name}', failed to poll from model repository"
            )));
        };
        // An ensemble's members load with it, first.
        let mut entry = None;
        for model in members::load_order(self.with_members(vec![model])) {
            let asked = model.name == name;
            let loaded = self.install(model);
            if asked {
                entry = Some(loaded);
            }
        }
        let entry = entry.expect("the model asked for is in the load order");
        if let Some(failure) = entry.failure {
            return Err(Error::invalid_arg(format!(
                "load failed for model '{name}': {failure}"
            )));
        }
        match entry.versions.values().find(|s| s.model.is_none()) {
            None => Ok(()),
            Some(slot) => Err(Error::invalid_arg(format!(
                "load failed for model '{name}': version {} is at {} state: {}",
                slot.status.version, slot.status.state, slot.status.reason
            ))),
        }
    }

    /// Unloads every version of `name` after its queued requests finish
    /// (explicit mode only). Unloading a model that is not loaded succeeds.
    pub fn unload_model(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "unload")?;
        let _guard = self.inner.lifecycle.lock().unwrap();
        let Some(entry) = self.inner.models.get(name) else {
            return Ok(());
        };
        self.inner
            .models
            .replace(name, entry.unavailable("unloaded"));
        for model in entry.loaded() {
            model.shutdown();
            log::info!("successfully unloaded '{name}' version {}", model.version());
        }
        Ok(())
    }

    /// Every model in the repositories and every model the server knows,
    /// with each version's state; `ready_only` keeps the ready ones.
    pub fn repository_index(&self, ready_only: bool) -> Vec<IndexEntry> {
        let known: BTreeMap<String, ModelEntry> = self.inner.models.read(|m| m.clone());
        let mut index = Vec::new();
        let on_disk = scan(&self.config().repositories, &ScanOptions::default());
        let mut names: Vec<String> = on_disk.models.into_iter().map(|m| m.name).collect();
        names.extend(known.keys().cloned());
        names.sort();
        names.dedup();
        for name in names {
            match known.get(&name) {
                Some(entry) => index.extend(entry_rows(&name, entry)),
                None => index.push(IndexEntry {
                    name,
                    version: None,
                    state: None,
                    reason: String::new(),
                }),
            }
        }
        if ready_only {
            index.retain(|e| e.state == Some(ModelState::Ready));
        }
        index
    }

    pub(super) fn scan_options(&self, only: Option<Vec<String>>) -> ScanOptions {
        ScanOptions {
            auto_complete: self.config().auto_complete,
            gpus: self.config().gpus.clone(),
            only,
            backends: Some(self.inner.backends.clone()),
        }
    }

    fn check_explicit(&self, name: &str, action: &str) -> Result<()> {
        if self.config().control_mode == ModelControlMode::Explicit {
            return Ok(());
        }
        log::warn!("refused to {action} '{name}': the model control mode is not explicit");
        Err(Error::unavailable(
            "explicit model load / unload is not allowed if polling is enabled",
        ))
    }

    /// Loads every version of a scanned model and puts the result in the
    /// table, replacing (then shutting down) what was there.
    fn install(&self, model: ScannedModel) -> ModelEntry {
        let _guard = self.inner.lifecycle.lock().unwrap();
        let previous = self.inner.models.get(&model.name);
        let entry = match model.outcome {
            Err(errors) => {
                let reason = errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                log::error!("failed to load '{}': {reason}", model.name);
                ModelEntry {
                    failure: Some(reason),
                    ..Default::default()
                }
            }
            Ok(spec) => self.load_versions(spec),
        };
        let failed = entry.failure.is_some() || entry.versions.values().any(|s| s.model.is_none());
        if let Some(previous) = previous.filter(|p| failed && p.loaded().next().is_some()) {
            // A failed reload leaves the loaded model serving, as in Triton.
            log::error!(
                "reload of '{}' failed; the loaded versions keep serving",
                model.name
            );
            self.inner.models.replace(&model.name, previous);
            for new_model in entry.loaded() {
                new_model.shutdown();
            }
            return entry;
        }
        let old = self.inner.models.replace(&model.name, entry.clone());
        for old_model in old.iter().flat_map(|e| e.loaded()) {
            old_model.shutdown();
        }
        entry
    }

    fn load_versions(&self, spec: ModelSpec) -> ModelEntry {
        let config = Arc::new(spec.config);
        let mut entry = ModelEntry {
            config: Some(config.clone()),
            ..Default::default()
        };
        for version in spec.versions {
            let context = ModelContext {
                name: config.name.clone(),
                version: version.version,
                config: config.clone(),
                model_path: spec.dir.path.clone(),
                version_path: version.path.clone(),
                host: ServerHost::new(self),
            };
            self.inner.models.set_status(
                &config.name,
                VersionStatus {
                    version: version.version,
                    state: ModelState::Loading,
                    reason: String::new(),
                },
            );
            let slot = match self.load_version(context) {
                Ok(model) => {
                    log::info!(
                        "successfully loaded '{}' version {}",
                        config.name,
                        version.version
                    );
                    VersionSlot {
                        status: VersionStatus {
                            version: version.version,
                            state: ModelState::Ready,
                            reason: String::new(),
                        },
                        model: Some(Arc::new(model)),
                    }
                }
                Err(e) => {
                    log::error!(
                        "failed to load '{}' version {}: {}",
                        config.name,
                        version.version,
                        e.message
                    );
                    VersionSlot {
                        status: VersionStatus {
                            version: version.version,
                            state: ModelState::Unavailable,
                            reason: e.message,
                        },
                        model: None,
                    }
                }
            };
            entry.versions.insert(version.version, slot);
        }
        entry
    }

    fn load_version(&self, context: ModelContext) -> Result<LoadedModel> {
        let config = &context.config;
        if config.platform == ENSEMBLE_PLATFORM {
            self.check_members_ready(config)?;
            let histograms = self.config().latency_histograms;
            return LoadedModel::ensemble(context, ServerHost::new(self), histograms);
        }
        let backend = self.inner.backends.get(&config.backend).ok_or_else(|| {
            Error::new(
                oxiserve_types::ErrorKind::Unsupported,
                format!(
                    "backend '{}' is not available in this build; available backends: {}",
                    config.backend,
                    self.inner.backends.names().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        LoadedModel::load(backend.as_ref(), context, self.config().latency_histograms)
    }
}

fn entry_rows(name: &str, entry: &ModelEntry) -> Vec<IndexEntry> {
    if entry.versions.is_empty() {
        return vec![IndexEntry {
            name: name.to_string(),
            version: None,
            state: Some(ModelState::Unavailable),
            reason: entry.failure.clone().unwrap_or_default(),
        }];
    }
    entry
        .versions
        .values()
        .map(|slot| IndexEntry {
            name: name.to_string(),
            version: Some(slot.status.version),
            state: Some(slot.status.state),
            reason: slot.status.reason.clone(),
        })
        .collect()
}
