//! Loading and unloading models: at start-up, and on request in explicit
//! mode; the repository index.

use oxiserve_types::{Error, Result};

use super::{
    ModelManager,
    install::{Origin, poll_failure},
    members,
    table::{Entries, ModelEntry, UNLOADED},
};
use crate::{
    config::ModelControlMode,
    model::ModelState,
    repository::{
        FolderPoll, LoadRequest, ModelId, ModelOverride, OverrideFolder, ScanOptions, ScannedModel,
        check_model_name, scan,
    },
};

/// One row of the repository index: a model, or one of its versions. With
/// namespacing each copy of a name has its rows (the namespace is not shown,
/// as in Triton).
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
    /// from the repository (explicit mode only): with namespacing, every
    /// model of that name. The old versions serve until the new ones are
    /// ready.
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
        let (copies, unpolled): (Vec<ScannedModel>, Vec<ScannedModel>) = scan
            .models
            .into_iter()
            .filter(|m| m.id.name == name && m.path.is_some())
            .partition(|m| m.poll == FolderPoll::Read);
        // As Triton: a copy that cannot be polled fails the load (its loaded
        // versions keep serving); the other copies load.
        let unpolled = unpolled.first().map(poll_failure);
        if copies.is_empty() && unpolled.is_none() {
            return Err(Error::internal(format!(
                "failed to load '{name}', failed to poll from model repository"
            )));
        }
        let origin = Origin {
            explicit: true,
            folder,
            config_given: request.config.is_some(),
        };
        let failures: Vec<String> = self
            .install_with_members(copies, origin)
            .into_iter()
            .filter_map(|(id, entry)| {
                load_failure(&entry).map(|f| format!("load failed for model '{id}': {f}"))
            })
            .collect();
        if let Some(reason) = unpolled {
            return Err(Error::internal(format!(
                "failed to load '{name}', failed to poll from model repository: {reason}"
            )));
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(Error::invalid_arg(failures.join("\n"))),
        }
    }

    /// Unloads every version of `name` (with namespacing, of every model of
    /// that name) once the requests already given to it finish (explicit
    /// mode only). Unloading a model that is not loaded succeeds.
    pub fn unload_model(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "unload")?;
        self.unload(name, false)
    }

    /// [`Server::unload_model`], and then the models loaded only because
    /// `name` (an ensemble) needed them, unless another model still uses
    /// them (the `unload_dependents` parameter).
    pub fn unload_model_and_dependents(&self, name: &str) -> Result<()> {
        self.check_explicit(name, "unload")?;
        self.unload(name, true)
    }

    /// Every model in the repositories and every model the server knows,
    /// with each version's state, ordered by namespace then name; `ready_only`
    /// keeps the ready ones.
    pub fn repository_index(&self, ready_only: bool) -> Vec<IndexEntry> {
        if let Err(e) = self.sync_repositories() {
            log::error!("repository index from the last copy: {e}");
        }
        let known: Entries = self.inner.models.read(|m| m.clone());
        let mut index = Vec::new();
        let options = ScanOptions {
            namespacing: self.config().model_namespacing,
            ..ScanOptions::default()
        };
        let on_disk = scan(&self.config().repositories, &options);
        let mut ids: Vec<ModelId> = on_disk.models.into_iter().map(|m| m.id).collect();
        // A model unloaded or gone whose folder is gone too is not listed,
        // as Triton lists the folders of the repositories.
        ids.extend(
            known
                .iter()
                .filter(|(_, e)| !e.removed)
                .map(|(id, _)| id.clone()),
        );
        ids.sort();
        ids.dedup();
        for id in ids {
            match known.get(&id) {
                Some(entry) => index.extend(entry_rows(&id.name, entry)),
                None => index.push(IndexEntry {
                    name: id.name,
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
            namespacing: self.config().model_namespacing,
        }
    }

    /// Installs `models` (the copies of one name) and, first, the members
    /// of their ensembles that are not ready yet (loaded along with them,
    /// not explicitly); then the ensembles using any of them follow.
    /// Returns what each model asked for gave.
    fn install_with_members(
        &self,
        models: Vec<ScannedModel>,
        origin: Origin,
    ) -> Vec<(ModelId, ModelEntry)> {
        let asked: Vec<ModelId> = models.iter().map(|m| m.id.clone()).collect();
        let mut entries = Vec::new();
        let mut names = Vec::new();
        for model in members::load_order(self.with_members(models)) {
            names.push(model.id.name.clone());
            if asked.contains(&model.id) {
                let id = model.id.clone();
                entries.push((id, self.install(model, origin.clone())));
            } else {
                self.install(model, Origin::default());
            }
        }
        names.sort();
        names.dedup();
        for name in names {
            self.follow_members(&name);
        }
        entries
    }

    /// Takes every model named `name` out of service and shuts its versions
    /// down; with `dependents`, then the members it alone had loaded.
    fn unload(&self, name: &str, dependents: bool) -> Result<()> {
        let ids: Vec<ModelId> = self.inner.models.read(|models| {
            models
                .iter()
                .filter(|(id, e)| id.name == name && !e.removed)
                .map(|(id, _)| id.clone())
                .collect()
        });
        for id in ids {
            self.unload_model_id(&id, dependents).map_err(|e| {
                Error::new(e.kind, format!("failed to unload '{name}': {}", e.message))
            })?;
        }
        Ok(())
    }

    /// [`ModelManager::unload`] for one model.
    fn unload_model_id(&self, id: &ModelId, dependents: bool) -> Result<()> {
        let config = self.remove(id)?;
        self.follow_members(&id.name);
        let Some(config) = config.filter(|_| dependents) else {
            return Ok(());
        };
        for member in members::bound_members(&config) {
            let unused = self.inner.models.read(|models| {
                let implicit = models
                    .get(&member)
                    .is_some_and(|e| !e.explicit && e.loaded().next().is_some());
                let used = models.iter().any(|(other, e)| {
                    other != id
                        && e.loaded().next().is_some()
                        && e.config
                            .as_deref()
                            .is_some_and(|c| members::bound_members(c).contains(&member))
                });
                implicit && !used
            });
            if unused {
                log::info!("unloading '{member}', which only '{id}' needed");
                self.unload_model_id(&member, true)?;
            }
        }
        Ok(())
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

/// Why a load of `entry` failed, as Triton says it: the model's failure, or
/// each version that failed (not those unloaded with it); `None` if it loaded.
fn load_failure(entry: &ModelEntry) -> Option<String> {
    if let Some(failure) = &entry.failure {
        return Some(failure.clone());
    }
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
    (!failed.is_empty()).then_some(failed)
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
