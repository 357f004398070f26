//! Ensembles and their members at load time: members are loaded with the
//! ensemble that needs them, and before it.

use oxiserve_config::platform::ENSEMBLE_PLATFORM;
use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};
use oxiserve_types::{Error, Result};

use super::ModelManager;
use crate::repository::{ScannedModel, scan};

/// The member model names of a scanned ensemble (none for other models).
pub(super) fn members(model: &ScannedModel) -> Vec<&str> {
    match &model.outcome {
        Ok(spec) => config_members(&spec.config),
        Err(_) => Vec::new(),
    }
}

/// The member model names of an ensemble's configuration (none for other models).
pub(super) fn config_members(config: &ModelConfig) -> Vec<&str> {
    match &config.scheduling_choice {
        Some(SchedulingChoice::EnsembleScheduling(e)) if config.platform == ENSEMBLE_PLATFORM => {
            e.step.iter().map(|s| s.model_name.as_str()).collect()
        }
        _ => Vec::new(),
    }
}

/// `models` in an order where each ensemble comes after the members listed
/// with it (a cycle, refused by validation anyway, keeps its order).
pub(super) fn load_order(mut models: Vec<ScannedModel>) -> Vec<ScannedModel> {
    let mut ordered: Vec<ScannedModel> = Vec::with_capacity(models.len());
    while !models.is_empty() {
        let waiting = |m: &ScannedModel, pending: &[ScannedModel]| {
            members(m)
                .iter()
                .any(|name| *name != m.name && pending.iter().any(|p| p.name == *name))
        };
        let next = (0..models.len())
            .find(|&i| !waiting(&models[i], &models))
            .unwrap_or(0);
        ordered.push(models.remove(next));
    }
    ordered
}

impl ModelManager {
    /// Adds to `models` the members of its ensembles that are neither in
    /// it nor ready (explicit mode: loading an ensemble loads its members).
    pub(super) fn with_members(&self, mut models: Vec<ScannedModel>) -> Vec<ScannedModel> {
        loop {
            let mut missing: Vec<String> = models
                .iter()
                .flat_map(members)
                .filter(|name| !models.iter().any(|m| m.name == *name))
                .filter(|name| !self.model_ready(name, None))
                .map(str::to_string)
                .collect();
            missing.sort();
            missing.dedup();
            if missing.is_empty() {
                return models;
            }
            let found = scan(
                &self.config().repositories,
                &self.scan_options(Some(missing.clone())),
            );
            let found: Vec<ScannedModel> = found
                .models
                .into_iter()
                .filter(|m| missing.contains(&m.name) && m.path.is_some())
                .collect();
            if found.is_empty() {
                return models;
            }
            models.extend(found);
        }
    }

    /// Refuses to load an ensemble whose members are not ready, naming them.
    pub(super) fn check_members_ready(&self, config: &ModelConfig) -> Result<()> {
        let Some(SchedulingChoice::EnsembleScheduling(e)) = &config.scheduling_choice else {
            return Ok(());
        };
        let mut missing: Vec<&str> = e
            .step
            .iter()
            .filter(|s| {
                let version = (s.model_version >= 0).then_some(s.model_version);
                !self.model_ready(&s.model_name, version)
            })
            .map(|s| s.model_name.as_str())
            .collect();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Error::invalid_arg(format!(
            "ensemble {} contains models that are not available or ambiguous: {}",
            config.name,
            missing.join(", ")
        )))
    }
}
