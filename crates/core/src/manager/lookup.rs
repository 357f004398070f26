//! Finding models and versions, with Triton's errors when they are not there.

use std::sync::Arc;

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

use super::ModelManager;
use crate::{
    model::{LoadedModel, ModelMetadata},
    stats::ModelStatistics,
};

impl ModelManager {
    /// The ready model `name` at `version`, or at its highest ready version.
    pub fn model(&self, name: &str, version: Option<i64>) -> Result<Arc<LoadedModel>> {
        self.inner.models.read(|models| {
            let Some(entry) = models.get(name) else {
                return Err(unknown_model(name, None));
            };
            match entry.ready(version) {
                Some(model) => Ok(model.clone()),
                None => Err(match version {
                    Some(v) if entry.versions.contains_key(&v) => Error::unavailable(format!(
                        "Request for unknown model: '{name}' version {v} is not at ready state"
                    )),
                    Some(_) => unknown_model(name, version),
                    None => Error::not_found(format!(
                        "Request for unknown model: '{name}' has no available versions"
                    )),
                }),
            }
        })
    }

    /// Whether `name` (at `version`, or any version) is ready.
    pub fn model_ready(&self, name: &str, version: Option<i64>) -> bool {
        self.model(name, version).is_ok()
    }

    /// The metadata of a ready model: all its ready versions, or only the one asked for.
    pub fn model_metadata(&self, name: &str, version: Option<i64>) -> Result<ModelMetadata> {
        let model = self.model(name, version)?;
        if version.is_some() {
            return Ok(ModelMetadata::new(
                model.config(),
                vec![model.version().to_string()],
            ));
        }
        let versions = self.inner.models.read(|models| {
            models
                .get(name)
                .map(|entry| entry.loaded().map(|m| m.version().to_string()).collect())
                .unwrap_or_default()
        });
        Ok(ModelMetadata::new(model.config(), versions))
    }

    /// The configuration of a ready model.
    pub fn model_config(&self, name: &str, version: Option<i64>) -> Result<Arc<ModelConfig>> {
        Ok(self.model(name, version)?.config().clone())
    }

    /// Every loaded model version, ordered by name then version.
    pub fn loaded_models(&self) -> Vec<Arc<LoadedModel>> {
        let mut loaded: Vec<_> = self.inner.models.read(|models| {
            models
                .values()
                .flat_map(|entry| entry.loaded().cloned())
                .collect()
        });
        loaded.sort_by(|a, b| (a.name(), a.version()).cmp(&(b.name(), b.version())));
        loaded
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
                    models
                        .get(name)
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

fn not_available(name: &str) -> Error {
    Error::invalid_arg(format!("requested model '{name}' is not available"))
}

fn unknown_model(name: &str, version: Option<i64>) -> Error {
    match version {
        Some(v) => Error::not_found(format!(
            "Request for unknown model: '{name}' version {v} is not found"
        )),
        None => Error::not_found(format!("Request for unknown model: '{name}' is not found")),
    }
}
