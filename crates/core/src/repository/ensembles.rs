//! Ensembles are checked once all models are read: each step against its
//! member model, and an ensemble whose member failed fails with it.

use oxiserve_config::{
    ConfigError, ModelConfig, ensemble::check_members, platform::ENSEMBLE_PLATFORM,
};

use super::model_dir::ScannedModel;

/// The member names of the ensembles in `models`, sorted, once each.
pub(super) fn ensemble_members(models: &[ScannedModel]) -> Vec<String> {
    let mut names: Vec<String> = models
        .iter()
        .filter_map(|m| m.outcome.as_ref().ok())
        .filter(|spec| spec.config.platform == ENSEMBLE_PLATFORM)
        .flat_map(|spec| ensemble_steps(&spec.config).map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Checks every successfully read ensemble in `models` against the others
/// and `unread` (members read only for this check). `all_names` are all
/// model names in the repositories.
pub(super) fn check_ensembles(
    models: &mut [ScannedModel],
    unread: &[ScannedModel],
    all_names: &[&str],
) {
    let snapshot: Vec<(String, Result<ModelConfig, ()>)> = models
        .iter()
        .chain(unread)
        .map(|m| {
            (
                m.name.clone(),
                m.outcome.as_ref().map(|s| s.config.clone()).map_err(|_| ()),
            )
        })
        .collect();
    for model in models.iter_mut() {
        let Ok(spec) = &model.outcome else { continue };
        if spec.config.platform != ENSEMBLE_PLATFORM {
            continue;
        }
        let lookup = |name: &str| snapshot.iter().find(|(n, _)| n == name).map(|(_, c)| c);
        let mut errors: Vec<ConfigError> = Vec::new();
        for step in ensemble_steps(&spec.config) {
            if let Some(Err(())) = lookup(step) {
                errors.push(ConfigError::whole(format!(
                    "member model '{step}' failed to load"
                )));
            }
        }
        let member = |name: &str| lookup(name).and_then(|c| c.as_ref().ok());
        errors.extend(check_members(&spec.config, all_names, member));
        if !errors.is_empty() {
            let config_path = spec.dir.path.join("config.pbtxt");
            model.outcome = Err(errors
                .into_iter()
                .map(|e| e.locate(&config_path, Some(&spec.source_map)))
                .collect());
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
