//! Finding models and versions, with Triton's errors when they are not there.
//! A request names a model; with `--model-namespacing` the name is resolved
//! to one model of the table first ([`ModelManager::identify`]).

use std::sync::Arc;

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

use super::{ModelManager, table::Entries};
use crate::{
    model::{LoadedModel, ModelMetadata},
    repository::{ModelId, Resolved, resolve},
    stats::ModelStatistics,
};

impl ModelManager {
    /// The ready model `name` at `version`, or at its highest ready version.
    pub fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        self.inner.models.read(|models| {
            let id = self.identify(models, name)?;
            ready_version(models, &id, version)
        })
    }

    /// [`ModelManager::model`] for a model already identified.
    pub(super) fn model_by_id(
        &self,
        id: &ModelId,
        version: Option<i64>,
    ) -> Result<Arc<LoadedModel>> {
        self.inner
            .models
            .read(|models| ready_version(models, id, version))
    }

    /// Which model of the table a request's `name` means, as Triton finds
    /// it. Without namespacing, the one model of that name. With it, the one
    /// copy of that name still in the repositories (a removed copy does not
    /// count): more than one is ambiguous, and a name whose every copy was
    /// removed is "not found in global map".
    pub(super) fn identify(&self, models: &Entries, name: &str) -> Result<ModelId> {
        if !self.config().model_namespacing {
            return Ok(ModelId::new("", name));
        }
        let copies = models.iter().filter(|(_, e)| !e.removed).map(|(id, _)| id);
        match resolve(copies, None, name) {
            Resolved::One(id) => Ok(id.clone()),
            Resolved::Many(count) => Err(Error::invalid_arg(format!(
                "There are {count} identifiers of model '{name}' in global map, model \
                 namespace must be provided to resolve ambiguity."
            ))),
            Resolved::None if models.keys().any(|id| id.name == name) => Err(Error::not_found(
                format!("Identifier of model '{name}' is not found in global map"),
            )),
            Resolved::None => Err(Error::invalid_arg(format!(
                "Request for unknown model: '{name}' is not found"
            ))),
        }
    }

    /// Whether `name` (at `version`, or any version) is ready.
    pub fn model_ready(&self, name: &str, version: Option<i64>) -> bool {
        self.model(name, version).is_ok()
    }

    /// The metadata of a ready model: all its ready versions, or only the one asked for.
    pub fn model_metadata(&self, name: &str, version: Option<i64>) -> Result<ModelMetadata> {
        let (model, versions) = self.inner.models.read(|models| {
            let id = self.identify(models, name)?;
            let model = ready_version(models, &id, version)?;
            let versions: Vec<String> = match version {
                Some(_) => vec![model.version().to_string()],
                None => models[&id]
                    .loaded()
                    .map(|m| m.version().to_string())
                    .collect(),
            };
            Ok::<_, Error>((model, versions))
        })?;
        Ok(ModelMetadata::new(model.config(), versions))
    }

    /// The configuration of a ready model.
    pub fn model_config(&self, name: &str, version: Option<i64>) -> Result<Arc<ModelConfig>> {
        Ok(self.model(name, version)?.config().clone())
    }

    /// Every loaded model version, ordered by namespace, name, then version.
    pub fn loaded_models(&self) -> Vec<Arc<LoadedModel>> {
        self.inner.models.read(|models| {
            models
                .values()
                .flat_map(|entry| entry.loaded().cloned())
                .collect()
        })
    }

    /// Statistics of one model (one version or all its loaded versions), or of
    /// every loaded model when `name` is `None`.
    pub fn statistics(
        &self,
        name: Option<&str>,
        version: Option<i64>,
    ) -> Result<Vec<ModelStatistics>> {
        match name {
            None => Ok(self.inner.models.read(|models| {
                models
                    .values()
                    .flat_map(|entry| entry.loaded().map(|m| m.statistics()))
                    .collect()
            })),
            Some(name) => {
                if let Some(v) = version {
                    return match self.model(name, Some(v)) {
                        Ok(model) => Ok(vec![model.statistics()]),
                        Err(_) if self.model(name, None).is_ok() => Err(Error::invalid_arg(
                            format!("requested model version is not available for model '{name}'"),
                        )),
                        Err(_) => Err(not_available(name)),
                    };
                }
                let stats: Vec<ModelStatistics> = self.inner.models.read(|models| {
                    let Ok(id) = self.identify(models, name) else {
                        return Vec::new();
                    };
                    models
                        .get(&id)
                        .map(|entry| entry.loaded().map(|m| m.statistics()).collect())
                        .unwrap_or_default()
                });
                if stats.is_empty() {
                    return Err(not_available(name));
                }
                Ok(stats)
            }
        }
    }
}

/// The ready version `version` of model `id` (its highest ready version for
/// `None`), with Triton's errors; they name the model as Triton's lifecycle
/// does (`<namespace>::<name>` with a namespace).
fn ready_version(models: &Entries, id: &ModelId, version: Option<i64>) -> Result<Arc<LoadedModel>> {
    let Some(entry) = models.get(id) else {
        return Err(unknown_model(id, None));
    };
    match entry.ready(version) {
        Some(model) => Ok(model.clone()),
        None => Err(match version {
            Some(v) if entry.versions.contains_key(&v) => Error::unavailable(format!(
                "Request for unknown model: '{id}' version {v} is not at ready state"
            )),
            Some(_) => unknown_model(id, version),
            None => Error::not_found(format!(
                "Request for unknown model: '{id}' has no available versions"
            )),
        }),
    }
}

fn not_available(name: &str) -> Error {
    Error::invalid_arg(format!("requested model '{name}' is not available"))
}

fn unknown_model(id: &ModelId, version: Option<i64>) -> Error {
    match version {
        Some(v) => Error::not_found(format!(
            "Request for unknown model: '{id}' version {v} is not found"
        )),
        None => Error::not_found(format!("Request for unknown model: '{id}' is not found")),
    }
}
