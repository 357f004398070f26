//! Validation of a normalized configuration with Triton's rules. Every problem
//! is reported (not only the first), each naming the field at fault.

mod instance_group;
mod io;
mod scheduling;

use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};

use crate::{
    ensemble,
    error::ConfigError,
    platform::{self, ENSEMBLE_PLATFORM, PLATFORMS},
    suggest::did_you_mean,
};

/// Checks a normalized configuration; an empty result means valid.
pub fn validate(config: &ModelConfig, gpus: &[i32]) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    if config.name.is_empty() {
        errors.push(ConfigError::field(
            "name",
            "model configuration must specify 'name'",
        ));
    }
    check_platform(config, &mut errors);
    if config.max_batch_size < 0 {
        errors.push(ConfigError::field(
            "max_batch_size",
            format!(
                "must be 0 (no batching) or positive, got {}",
                config.max_batch_size
            ),
        ));
    }
    check_version_policy(config, &mut errors);
    io::check(config, &mut errors);
    scheduling::check(config, &mut errors);
    instance_group::check(config, gpus, &mut errors);
    let is_ensemble_platform = config.platform == ENSEMBLE_PLATFORM;
    match &config.scheduling_choice {
        Some(SchedulingChoice::EnsembleScheduling(_)) => ensemble::check_graph(config, &mut errors),
        _ if is_ensemble_platform => errors.push(ConfigError::field(
            "ensemble_scheduling",
            "an ensemble (platform \"ensemble\") must define 'ensemble_scheduling { step [ ... ] }'",
        )),
        _ => {}
    }
    let decoupled = config.model_transaction_policy.is_some_and(|p| p.decoupled);
    let cached = config.response_cache.is_some_and(|c| c.enable);
    if cached && decoupled {
        errors.push(ConfigError::field(
            "response_cache.enable",
            "the response cache does not support decoupled models; disable one of them",
        ));
    }
    if cached
        && matches!(
            config.scheduling_choice,
            Some(SchedulingChoice::SequenceBatching(_))
        )
    {
        errors.push(ConfigError::field(
            "response_cache.enable",
            "the response cache does not support sequence batching; disable one of them",
        ));
    }
    errors
}

fn check_platform(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    let (platform, backend) = (config.platform.as_str(), config.backend.as_str());
    if platform == ENSEMBLE_PLATFORM {
        if !backend.is_empty() {
            errors.push(ConfigError::field(
                "backend",
                format!("an ensemble must not set 'backend' (got \"{backend}\")"),
            ));
        }
        return;
    }
    if backend.is_empty() {
        let hint = if platform.is_empty() {
            String::new()
        } else {
            did_you_mean(platform, PLATFORMS.iter().copied())
        };
        let what = if platform.is_empty() {
            "must specify 'platform' or 'backend'".to_string()
        } else {
            format!("unknown platform \"{platform}\"{hint}")
        };
        errors.push(ConfigError::field(
            if platform.is_empty() {
                "backend"
            } else {
                "platform"
            },
            what,
        ));
        return;
    }
    if let Some(known) = platform::backend(backend) {
        let fits = if known.platforms.is_empty() {
            platform.is_empty()
        } else {
            known.platforms.contains(&platform)
        };
        if !fits {
            let expected = if known.platforms.is_empty() {
                "no platform".to_string()
            } else {
                known
                    .platforms
                    .iter()
                    .map(|p| format!("\"{p}\""))
                    .collect::<Vec<_>>()
                    .join(" or ")
            };
            errors.push(ConfigError::field(
                "platform",
                format!(
                    "platform \"{platform}\" does not go with backend \"{backend}\" (expected {expected})"
                ),
            ));
        }
    } else if !platform.is_empty() && platform::backend_for_platform(platform).is_some() {
        errors.push(ConfigError::field(
            "backend",
            format!("backend \"{backend}\" does not go with platform \"{platform}\""),
        ));
    }
}

fn check_version_policy(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    use oxiserve_proto::inference::model_version_policy::PolicyChoice;
    match config
        .version_policy
        .as_ref()
        .and_then(|p| p.policy_choice.as_ref())
    {
        None => errors.push(ConfigError::field(
            "version_policy",
            "must choose one of 'latest', 'all' or 'specific'",
        )),
        Some(PolicyChoice::Latest(latest)) if latest.num_versions == 0 => errors.push(
            ConfigError::field("version_policy.latest.num_versions", "must be at least 1"),
        ),
        Some(PolicyChoice::Specific(specific)) => {
            if specific.versions.is_empty() {
                errors.push(ConfigError::field(
                    "version_policy.specific.versions",
                    "must list at least one version",
                ));
            }
            if let Some(v) = specific.versions.iter().find(|v| **v < 0) {
                errors.push(ConfigError::field(
                    "version_policy.specific.versions",
                    format!("version {v} is negative; versions are folder numbers >= 0"),
                ));
            }
        }
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests;
