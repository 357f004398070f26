//! Ensembles and their members at load time: members are loaded with the
//! ensemble that needs them, and before it; each step is bound to the model
//! it runs on, as Triton's dependency graph binds it.

use oxiserve_config::platform::ENSEMBLE_PLATFORM;
use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_ensembling::Step},
};
use oxiserve_types::{Error, Result};

use super::ModelManager;
use crate::repository::{ModelId, Resolved, ScannedModel, resolve, scan};

/// The member model names of a scanned ensemble (none for other models).
pub(super) fn members(model: &ScannedModel) -> Vec<&str> {
    match &model.outcome {
        Ok(spec) => config_members(&spec.config),
        Err(_) => Vec::new(),
    }
}

/// The member model names of an ensemble's configuration (none for other models).
pub(super) fn config_members(config: &ModelConfig) -> Vec<&str> {
    steps(config)
        .iter()
        .map(|s| s.model_name.as_str())
        .collect()
}

/// The models the steps of an ensemble's configuration are bound to (see
/// [`ModelManager::bind_steps`]); none for other models.
pub(super) fn bound_members(config: &ModelConfig) -> Vec<ModelId> {
    steps(config)
        .iter()
        .map(|s| ModelId::new(&s.model_namespace, &s.model_name))
        .collect()
}

/// The steps of an ensemble's configuration (none for other models).
pub(super) fn steps(config: &ModelConfig) -> &[Step] {
    match &config.scheduling_choice {
        Some(SchedulingChoice::EnsembleScheduling(e)) if config.platform == ENSEMBLE_PLATFORM => {
            &e.step
        }
        _ => &[],
    }
}

/// The version a step asks for: `None` for the latest (`model_version: -1`).
pub(super) fn step_version(step: &Step) -> Option<i64> {
    (step.model_version >= 0).then_some(step.model_version)
}

/// `models` in an order where each ensemble comes after the members listed
/// with it, every model of a step's name (a cycle, refused by validation
/// anyway, keeps its order).
pub(super) fn load_order(mut models: Vec<ScannedModel>) -> Vec<ScannedModel> {
    let mut ordered: Vec<ScannedModel> = Vec::with_capacity(models.len());
    while !models.is_empty() {
        let waiting = |m: &ScannedModel, pending: &[ScannedModel]| {
            members(m)
                .iter()
                .any(|name| *name != m.id.name && pending.iter().any(|p| p.id.name == *name))
        };
        let next = (0..models.len())
            .find(|&i| !waiting(&models[i], &models))
            .unwrap_or(0);
        ordered.push(models.remove(next));
    }
    ordered
}

impl ModelManager {
    /// Adds to `models` every model of a step's name of its ensembles that is
    /// neither in it nor ready (explicit mode: loading an ensemble loads its
    /// members; as Triton polls a step's name, that is every copy of it).
    pub(super) fn with_members(&self, mut models: Vec<ScannedModel>) -> Vec<ScannedModel> {
        loop {
            let mut names: Vec<String> = models
                .iter()
                .flat_map(members)
                .filter(|name| !models.iter().any(|m| m.id.name == *name))
                .map(str::to_string)
                .collect();
            names.sort();
            names.dedup();
            if names.is_empty() {
                return models;
            }
            let found = scan(&self.config().repositories, &self.scan_options(Some(names)));
            let found: Vec<ScannedModel> = found
                .models
                .into_iter()
                .filter(|m| m.path.is_some() && self.model_by_id(&m.id, None).is_err())
                .collect();
            if found.is_empty() {
                return models;
            }
            models.extend(found);
        }
    }

    /// Binds each step of ensemble `id` to the model it runs on: its
    /// `model_namespace` becomes the namespace of the model the step finds
    /// ([`ModelManager::step_models`]), as Triton sets it. Returns the step
    /// names that find no model or several, sorted; none for other models.
    pub(super) fn bind_steps(&self, id: &ModelId, config: &mut ModelConfig) -> Vec<String> {
        let found = self.step_models(id, config);
        let Some(SchedulingChoice::EnsembleScheduling(e)) = &mut config.scheduling_choice else {
            return Vec::new();
        };
        let mut unbound = Vec::new();
        for (step, model) in e.step.iter_mut().zip(found) {
            match model {
                Some(model) => step.model_namespace = model.namespace,
                None => {
                    step.model_namespace.clear();
                    unbound.push(step.model_name.clone());
                }
            }
        }
        unbound.sort();
        unbound.dedup();
        unbound
    }

    /// The model each step of ensemble `id` finds now, in step order. With
    /// namespacing, among the models of the table not removed: the model of
    /// the step's name in the ensemble's own namespace, else the only one of
    /// that name anywhere (`None`: no model, or several). Without, the model
    /// of that name.
    pub(super) fn step_models(&self, id: &ModelId, config: &ModelConfig) -> Vec<Option<ModelId>> {
        let names = config_members(config);
        if !self.config().model_namespacing {
            return names
                .into_iter()
                .map(|n| Some(ModelId::new("", n)))
                .collect();
        }
        self.inner.models.read(|models| {
            let copies = || models.iter().filter(|(_, e)| !e.removed).map(|(id, _)| id);
            names
                .into_iter()
                .map(|name| match resolve(copies(), Some(&id.namespace), name) {
                    Resolved::One(model) => Some(model.clone()),
                    Resolved::None | Resolved::Many(_) => None,
                })
                .collect()
        })
    }

    /// Refuses to load ensemble `id` while a model its steps are bound to is
    /// not ready (at the step's version), naming the steps.
    pub(super) fn check_members_ready(&self, id: &ModelId, config: &ModelConfig) -> Result<()> {
        let mut missing: Vec<&str> = steps(config)
            .iter()
            .filter(|s| {
                let member = ModelId::new(&s.model_namespace, &s.model_name);
                self.model_by_id(&member, step_version(s)).is_err()
            })
            .map(|s| s.model_name.as_str())
            .collect();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Error::invalid_arg(format!(
            "ensemble {id} contains models that are not available or ambiguous: {}",
            missing.join(", ")
        )))
    }
}
