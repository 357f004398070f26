//! Triton's defaults, applied after back-end field completion: version policy,
//! preferred batch sizes, sequence idle time, pinned memory and instance groups.

use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelInstanceGroup, ModelOptimizationPolicy, ModelVersionPolicy,
        model_config::SchedulingChoice,
        model_instance_group::Kind,
        model_optimization_policy::PinnedMemoryBuffer,
        model_sequence_batching::StrategyChoice,
        model_version_policy::{Latest, PolicyChoice},
    },
};

use crate::batch_plan::BatchPlan;

/// Idle time after which a sequence is released, when the config sets none.
pub const SEQUENCE_IDLE_DEFAULT_MICROSECONDS: u64 = 1_000_000;

/// Applies Triton's defaults to a completed configuration. `gpus` are the GPU
/// ids usable by this server (empty on a CPU-only machine).
pub fn normalize(config: &mut ModelConfig, gpus: &[i32]) {
    if config.version_policy.is_none() {
        config.version_policy = Some(ModelVersionPolicy {
            policy_choice: Some(PolicyChoice::Latest(Latest { num_versions: 1 })),
        });
    }
    let limit = BatchPlan::of(config).limit();
    let fill = |sizes: &mut Vec<i32>| {
        if let Some(limit) = limit.filter(|_| sizes.is_empty()) {
            sizes.push(i32::try_from(limit.get()).unwrap_or(i32::MAX));
        }
    };
    match &mut config.scheduling_choice {
        Some(SchedulingChoice::DynamicBatching(db)) => fill(&mut db.preferred_batch_size),
        Some(SchedulingChoice::SequenceBatching(sb)) => {
            if sb.max_sequence_idle_microseconds == 0 {
                sb.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
            }
            if let Some(StrategyChoice::Oldest(oldest)) = &mut sb.strategy_choice {
                fill(&mut oldest.preferred_batch_size);
            }
        }
        _ => {}
    }
    if is_ensemble(config) {
        // Triton states the transaction policy of every ensemble explicitly.
        config
            .model_transaction_policy
            .get_or_insert_with(Default::default);
        return;
    }
    let optimization = config
        .optimization
        .get_or_insert_with(ModelOptimizationPolicy::default);
    for pinned in [
        &mut optimization.input_pinned_memory,
        &mut optimization.output_pinned_memory,
    ] {
        pinned.get_or_insert(PinnedMemoryBuffer { enable: true });
    }
    normalize_instance_groups(config, gpus);
}

fn is_ensemble(config: &ModelConfig) -> bool {
    matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::EnsembleScheduling(_))
    )
}

/// Names, kinds, counts and GPUs of instance groups, as Triton fills them.
fn normalize_instance_groups(config: &mut ModelConfig, gpus: &[i32]) {
    if config.instance_group.is_empty() {
        config.instance_group.push(ModelInstanceGroup {
            name: config.name.clone(),
            ..Default::default()
        });
    }
    let name = config.name.clone();
    let backend = config.backend.clone();
    for (index, group) in config.instance_group.iter_mut().enumerate() {
        if group.name.is_empty() {
            group.name = format!("{name}_{index}");
        }
        if group.kind() == Kind::Auto {
            let all_usable = !gpus.is_empty() && group.gpus.iter().all(|g| gpus.contains(g));
            group.set_kind(if all_usable { Kind::Gpu } else { Kind::Cpu });
        }
        if group.count < 1 {
            group.count = default_instance_count(group.kind(), &backend);
        }
        if group.kind() == Kind::Gpu && group.gpus.is_empty() {
            group.gpus = gpus.to_vec();
        }
    }
}

/// TensorFlow and ONNX Runtime default to two CPU instances, all else to one.
fn default_instance_count(kind: Kind, backend: &str) -> i32 {
    if kind == Kind::Cpu && matches!(backend, "tensorflow" | "onnxruntime") {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::{
        ModelDynamicBatching, ModelEnsembling, ModelSequenceBatching,
        model_sequence_batching::StrategyOldest,
    };

    use super::*;

    fn config(backend: &str) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            backend: backend.into(),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_match_triton() {
        let mut c = config("python");
        normalize(&mut c, &[]);
        assert_eq!(
            c.version_policy.unwrap().policy_choice,
            Some(PolicyChoice::Latest(Latest { num_versions: 1 }))
        );
        let opt = c.optimization.unwrap();
        assert_eq!(
            opt.input_pinned_memory,
            Some(PinnedMemoryBuffer { enable: true })
        );
        assert_eq!(
            opt.output_pinned_memory,
            Some(PinnedMemoryBuffer { enable: true })
        );
        let group = &c.instance_group[0];
        assert_eq!(
            (group.name.as_str(), group.kind(), group.count),
            ("m", Kind::Cpu, 1)
        );
    }

    #[test]
    fn onnx_gets_two_cpu_instances_and_groups_are_named() {
        let mut c = config("onnxruntime");
        c.instance_group = vec![
            ModelInstanceGroup::default(),
            ModelInstanceGroup {
                count: 3,
                ..Default::default()
            },
        ];
        normalize(&mut c, &[]);
        let got: Vec<_> = c
            .instance_group
            .iter()
            .map(|g| (g.name.as_str(), g.count))
            .collect();
        assert_eq!(got, [("m_0", 2), ("m_1", 3)]);
    }

    #[test]
    fn auto_kind_picks_gpu_only_when_usable() {
        let mut c = config("python");
        c.instance_group = vec![ModelInstanceGroup::default()];
        normalize(&mut c, &[0, 1]);
        assert_eq!(c.instance_group[0].kind(), Kind::Gpu);
        assert_eq!(c.instance_group[0].gpus, [0, 1]);
        let mut c = config("python");
        c.instance_group = vec![ModelInstanceGroup {
            gpus: vec![3],
            ..Default::default()
        }];
        normalize(&mut c, &[0]);
        assert_eq!(c.instance_group[0].kind(), Kind::Cpu);
    }

    #[test]
    fn preferred_batch_size_defaults_to_max() {
        let mut c = config("python");
        c.max_batch_size = 8;
        c.scheduling_choice = Some(SchedulingChoice::DynamicBatching(
            ModelDynamicBatching::default(),
        ));
        normalize(&mut c, &[]);
        let Some(SchedulingChoice::DynamicBatching(db)) = c.scheduling_choice else {
            unreachable!()
        };
        assert_eq!(db.preferred_batch_size, [8]);
    }

    #[test]
    fn sequence_defaults() {
        let mut c = config("python");
        c.max_batch_size = 4;
        c.scheduling_choice = Some(SchedulingChoice::SequenceBatching(ModelSequenceBatching {
            strategy_choice: Some(StrategyChoice::Oldest(StrategyOldest::default())),
            ..Default::default()
        }));
        normalize(&mut c, &[]);
        let Some(SchedulingChoice::SequenceBatching(sb)) = c.scheduling_choice else {
            unreachable!()
        };
        assert_eq!(
            sb.max_sequence_idle_microseconds,
            SEQUENCE_IDLE_DEFAULT_MICROSECONDS
        );
        let Some(StrategyChoice::Oldest(o)) = sb.strategy_choice else {
            unreachable!()
        };
        assert_eq!(o.preferred_batch_size, [4]);
    }

    #[test]
    fn ensembles_get_no_instances_or_optimization() {
        let mut c = ModelConfig {
            name: "e".into(),
            platform: "ensemble".into(),
            scheduling_choice: Some(SchedulingChoice::EnsembleScheduling(
                ModelEnsembling::default(),
            )),
            ..Default::default()
        };
        normalize(&mut c, &[]);
        assert!(c.instance_group.is_empty());
        assert!(c.optimization.is_none());
        assert!(c.version_policy.is_some());
        assert_eq!(c.model_transaction_policy.map(|p| p.decoupled), Some(false));
    }
}
