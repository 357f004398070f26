//! Whether a configuration change can be applied to a loaded model in place:
//! Triton adds and removes instances without reloading the model when only
//! `instance_group` changed.

use oxiserve_proto::ModelConfig;

/// Whether `new` equals `old` apart from `instance_group` (identical
/// configurations included).
pub fn only_instance_groups_differ(old: &ModelConfig, new: &ModelConfig) -> bool {
    let without_groups = |config: &ModelConfig| ModelConfig {
        instance_group: Vec::new(),
        ..config.clone()
    };
    without_groups(old) == without_groups(new)
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelInstanceGroup;

    use super::*;

    #[test]
    fn only_a_change_of_instance_groups_is_an_instance_update() {
        let old = ModelConfig {
            name: "m".into(),
            max_batch_size: 4,
            instance_group: vec![ModelInstanceGroup {
                count: 1,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut more = old.clone();
        more.instance_group[0].count = 3;
        more.instance_group[0].name = "renamed".into();
        assert!(only_instance_groups_differ(&old, &more));
        assert!(only_instance_groups_differ(&old, &old));
        let mut batching = more.clone();
        batching.max_batch_size = 8;
        assert!(!only_instance_groups_differ(&old, &batching));
    }
}
