//! Model configurations with `parameters`, for backends' parameter tests.

use oxiserve_proto::{ModelConfig, inference::ModelParameter};

/// The configuration of model `name` whose `parameters` are `pairs`
/// (key, string value).
pub fn config_with_parameters(name: &str, pairs: &[(&str, &str)]) -> ModelConfig {
    ModelConfig {
        name: name.into(),
        parameters: pairs
            .iter()
            .map(|(key, value)| {
                (
                    key.to_string(),
                    ModelParameter {
                        string_value: value.to_string(),
                    },
                )
            })
            .collect(),
        ..Default::default()
    }
}
