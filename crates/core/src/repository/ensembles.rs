//! Ensembles are checked once all models are read: each step against its
//! member model, and an ensemble whose member failed fails with it. An
//! ensemble with a decoupled member becomes decoupled, as in Triton.

use oxiserve_config::{
    ConfigError, ModelConfig,
    ensemble::{check_members, decoupled_flow},
    platform::ENSEMBLE_PLATFORM,
};
use oxiserve_proto::inference::ModelTransactionPolicy;

use super::{
    model_dir::ScannedModel,
    model_id::{ModelId, Resolved, resolve},
};

/// The models the steps of the ensembles in `models` run on, each step
/// resolved among `ids` from its ensemble's namespace; sorted, once each.
pub(super) fn ensemble_members(models: &[ScannedModel], ids: &[&ModelId]) -> Vec<ModelId> {
    let mut members: Vec<ModelId> = models
        .iter()
        .filter_map(|m| Some((&m.id.namespace, &m.outcome.as_ref().ok()?.config)))
        .filter(|(_, config)| config.platform == ENSEMBLE_PLATFORM)
        .flat_map(|(namespace, config)| {
            ensemble_steps(config).filter_map(move |step| {
                match resolve(ids.iter().copied(), Some(namespace), step) {
                    Resolved::One(id) => Some(id.clone()),
                    Resolved::None | Resolved::Many(_) => None,
                }
            })
        })
        .collect();
    members.sort();
    members.dedup();
    members
}

/// Checks every successfully read ensemble in `models` against the others
/// and `unread` (members read only for this check). `ids` are all the models
/// in the repositories. An ensemble with an ambiguous step is left to its
/// load, which names the step.
pub(super) fn check_ensembles(
    models: &mut [ScannedModel],
    unread: &[ScannedModel],
    ids: &[&ModelId],
) {
    let snapshot: Vec<(ModelId, Result<ModelConfig, ()>)> = models
        .iter()
        .chain(unread)
        .map(|m| {
            (
                m.id.clone(),
                m.outcome.as_ref().map(|s| s.config.clone()).map_err(|_| ()),
            )
        })
        .collect();
    let all_names: Vec<&str> = ids.iter().map(|id| id.name.as_str()).collect();
    for model in models.iter_mut() {
        let Ok(spec) = &model.outcome else { continue };
        if spec.config.platform != ENSEMBLE_PLATFORM {
            continue;
        }
        let namespace = model.id.namespace.as_str();
        let resolved = |name: &str| resolve(ids.iter().copied(), Some(namespace), name);
        if ensemble_steps(&spec.config).any(|step| matches!(resolved(step), Resolved::Many(_))) {
            continue;
        }
        let lookup = |name: &str| match resolved(name) {
            Resolved::One(id) => snapshot.iter().find(|(i, _)| i == id).map(|(_, c)| c),
            Resolved::None | Resolved::Many(_) => None,
        };
        let mut errors: Vec<ConfigError> = Vec::new();
        for step in ensemble_steps(&spec.config) {
            if let Some(Err(())) = lookup(step) {
                errors.push(ConfigError::whole(format!(
                    "member model '{step}' failed to load"
                )));
            }
        }
        let member = |name: &str| lookup(name).and_then(|c| c.as_ref().ok());
        errors.extend(check_members(&spec.config, &all_names, member));
        // As in Triton, an ensemble is decoupled exactly when a member is.
        let decoupled = decoupled_flow(&spec.config, member)
            .inspect_err(|e| errors.push(e.clone()))
            .unwrap_or(false);
        if !errors.is_empty() {
            let config_path = spec.dir.path.join("config.pbtxt");
            model.outcome = Err(errors
                .into_iter()
                .map(|e| e.locate(&config_path, Some(&spec.source_map)))
                .collect());
        } else if let Ok(spec) = &mut model.outcome {
            spec.config.model_transaction_policy = Some(ModelTransactionPolicy { decoupled });
        }
    }
}

fn ensemble_steps(config: &ModelConfig) -> impl Iterator<Item = &str> {
    let steps = match &config.scheduling_choice {
        Some(oxiserve_proto::inference::model_config::SchedulingChoice::EnsembleScheduling(e)) => {
            e.step.as_slice()
        }
        _ => &[],
    };
    steps.iter().map(|s| s.model_name.as_str())
}
