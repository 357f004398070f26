//! Loading and unloading models: at start-up, and on request in explicit
//! mode; the repository index.

use std::collections::BTreeMap;

use oxiserve_types::{Error, Result};

use super::{
    ModelManager,
    install::{Origin, poll_failure},
    members,
    table::{ModelEntry, UNLOADED},
};
use crate::{
    config::ModelControlMode,
    model::ModelState,
    repository::{
        FolderPoll, LoadRequest, ModelOverride, OverrideFolder, ScanOptions, ScannedModel,
        check_model_name, scan,
    },
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

/// What loading the start-up models gave.
#[derive(Debug, Clone, Default)]
pub struct StartUpLoad {
    /// Problems with the repositories themselves (an unreadable folder).
    pub repository_errors: Vec<String>,
    /// The models that could not be polled or failed to load, sorted.
    pub failed_models: Vec<String>,
}

impl ModelManager {
    /// Loads the models the control mode says to load at start-up, up to
    /// `model_load_threads` at a time.
    pub fn load_startup_models(&self) -> StartUpLoad {
        let config = self.config();
        if let Err(e) = self.sync_repositories() {
            return StartUpLoad {
                repository_errors: vec![e],
                failed_models: Vec::new(),
            };
        }
        let only = match config.control_mode {
            ModelControlMode::Explicit => Some(config.startup_models.clone()),
            ModelControlMode::None | ModelControlMode::Poll => None,
        };
        let scan = scan(&config.repositories, &self.scan_options(only));
        let models = members::load_order(self.with_members(scan.models));
        // In explicit mode, members loaded only for an ensemble are not
        // loaded explicitly (unloading the ensemble's dependents may unload them).
        let explicit = |name: &str| {
            config.control_mode != ModelControlMode::Explicit
                || config.startup_models.iter().any(|m| m == "*" || m == name)
        };
        StartUpLoad {
            failed_models: self.install_in_parallel(models, explicit),
            repository_errors: scan.repository_errors,
        }
    }

    /// Loads (or reloads, as Triton does even if nothing changed) `name`
    /// from the repository (explicit mode only). The old versions serve
    /// until the new ones are ready.
    pub fn load_model(&self, name: &str) -> Result<()> {
        self.load_model_with(name, &LoadRequest::default())
    }

    /// [`Server::load_model`] with the load request's parameters: a JSON
    /// configuration, uploaded files, one version.
    pub fn load_model_with(&self, name: &str, request: &LoadRequest) -> Result<()> {
        self.check_explicit(name, "load")?;
        check_model_name(name)?;
        if !request.files.is_empty() && request.config.is_none() {
            return Err(Error::invalid_arg(
                "Load parameter 'config' must be specified for model file override",
            ));
        }
        let config = request.parsed_config()?;
        self.sync_repositories()
            .map_err(|e| Error::unavailable(format!("failed to load '{name}': {e}")))?;
        let folder = match request.files.is_empty() {
            true => None,
            false => Some(OverrideFolder::write(name, &request.files)?),
        };
        let mut options = self.scan_options(Some(vec![name.to_string()]));
        options.model_override = request.overrides().then(|| ModelOverride {
            name: name.to_string(),
            folder: folder.as_ref().map(|f| f.path.clone()),
            config,
            version: request.version,
        });
        let scan = scan(&self.config().repositories, &options);
        let Some(model) = scan
            .models
            .into_iter()
            .find(|m| m.name == name && m.path.is_some())
        else {
            return Err(Error::internal(format!(
                "failed to load '{name}', failed to poll from model repository"
            )));
        };
        if model.poll != FolderPoll::Read {
            // As Triton: the load fails, and a loaded model keeps serving.
            let reason = poll_failure(&model);
            return Err(Error::internal(format!(
                "failed to load '{name}', failed to poll from model repository: {reason}"
            )));
        }
        let origin = Origin {
            explicit: true,
            folder,
            config_given: request.config.is_some(),
        };
        let entry = self.install_with_members(model, origin);
        if let Some(failure) = entry.failure {
            return Err(Error::invalid_arg(format!(
                "load failed for model '{name}': {failure}"
            )));
        }
        // As Triton: each version that failed, not those unloaded with it.
        let failed: String = entry
            .versions
            .values()
            .filter(|s| s.model.is_none() && s.status.reason != UNLOADED)
            .map(|s| {
                format!(
                    "version {} is at {} state: {};",
                    s.status.version, s.status.state, s.status.reason
                )
            })
            .collect();
        if failed.is_empty() {
            self.bring_back_users(name);
            return Ok(());
        }
        Err(Error::invalid_arg(format!(
            "load failed for model '{name}': {failed}"
        )))
    }

    /// Unloads every version of `name` once the requests already given to
    /// it finish (explicit mode only). Unloading a model that is not loaded
    /// succeeds.
    pub fn unload_model(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "unload")?;
        self.unload(name, false);
        Ok(())
    }

    /// [`Server::unload_model`], and then the models loaded only because
    /// `name` (an ensemble) needed them, unless another model still uses
    /// them (the `unload_dependents` parameter).
    pub fn unload_model_and_dependents(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "unload")?;
        self.unload(name, true);
        Ok(())
    }

    /// Every model in the repositories and every model the server knows,
    /// with each version's state; `ready_only` keeps the ready ones.
    pub fn repository_index(&self, ready_only: bool) -> Vec<IndexEntry> {
        if let Err(e) = self.sync_repositories() {
            log::error!("repository index from the last copy: {e}");
        }
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
            config_name: self.config().model_config_name.clone(),
            only,
            backends: Some(self.inner.backends.clone()),
            model_override: None,
        }
    }

    /// Installs `model` and, first, the members of an ensemble that are not
    /// ready yet (loaded along with it, not explicitly).
    fn install_with_members(&self, model: ScannedModel, origin: Origin) -> ModelEntry {
        let name = model.name.clone();
        let mut origin = Some(origin);
        let mut asked = None;
        for model in members::load_order(self.with_members(vec![model])) {
            if model.name == name {
                asked = Some(self.install(model, origin.take().unwrap_or_default()));
            } else {
                self.install(model, Origin::default());
            }
        }
        asked.expect("the model asked for is in the load order")
    }

    /// Takes `name` out of service and shuts its versions down; with
    /// `dependents`, then the members it alone had loaded.
    fn unload(&self, name: &str, dependents: bool) {
        let config = self.take_out(name, UNLOADED);
        self.take_out_users(name);
        let Some(config) = config.filter(|_| dependents) else {
            return;
        };
        for member in members::config_members(&config) {
            let unused = self.inner.models.read(|models| {
                let implicit = models
                    .get(member)
                    .is_some_and(|e| !e.explicit && e.loaded().next().is_some());
                let used = models.iter().any(|(other, e)| {
                    other != name
                        && e.loaded().next().is_some()
                        && e.config
                            .as_deref()
                            .is_some_and(|c| members::config_members(c).contains(&member))
                });
                implicit && !used
            });
            if unused {
                log::info!("unloading '{member}', which only '{name}' needed");
                self.unload(member, true);
            }
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
