//! Instance groups: kinds, GPUs and profiles.

use oxiserve_proto::{
    ModelConfig,
    inference::{model_config::SchedulingChoice, model_instance_group::Kind},
};

use crate::error::ConfigError;

pub(super) fn check(config: &ModelConfig, gpus: &[i32], errors: &mut Vec<ConfigError>) {
    if matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::EnsembleScheduling(_))
    ) {
        return;
    }
    if config.instance_group.is_empty() {
        errors.push(ConfigError::field(
            "instance_group",
            "must specify one or more instance groups",
        ));
    }
    for (i, group) in config.instance_group.iter().enumerate() {
        let path = format!("instance_group[{i}]");
        let named = format!("instance group '{}'", group.name);
        match group.kind() {
            Kind::Model | Kind::Cpu if !group.gpus.is_empty() => errors.push(ConfigError::field(
                format!("{path}.gpus"),
                format!(
                    "{named} has kind {} but lists GPUs {:?}",
                    group.kind().as_str_name(),
                    group.gpus
                ),
            )),
            Kind::Gpu if group.gpus.is_empty() => errors.push(ConfigError::field(
                format!("{path}.kind"),
                format!(
                    "{named} has kind KIND_GPU but no GPU is available; use KIND_CPU or KIND_AUTO"
                ),
            )),
            Kind::Gpu => {
                for gpu in group.gpus.iter().filter(|g| !gpus.contains(g)) {
                    errors.push(ConfigError::field(
                        format!("{path}.gpus"),
                        format!("{named} asks for GPU {gpu}, which is not available (available: {gpus:?})"),
                    ));
                }
            }
            _ => {}
        }
        if group.count < 0 {
            errors.push(ConfigError::field(
                format!("{path}.count"),
                format!("must be positive, got {}", group.count),
            ));
        }
        if !group.profile.is_empty() && config.platform != "tensorrt_plan" {
            errors.push(ConfigError::field(
                format!("{path}.profile"),
                format!("{named}: 'profile' is only supported for TensorRT models"),
            ));
        }
    }
}
