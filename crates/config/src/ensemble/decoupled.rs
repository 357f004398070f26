//! Decoupled steps in an ensemble, as Triton's ensemble validation sees
//! them: the tensors made by a decoupled member have iterations of their
//! own, so a step may not read tensors that come from two different
//! streams, and an ensemble with a decoupled member is itself decoupled,
//! whatever its configuration says.

use std::collections::HashMap;

use oxiserve_proto::ModelConfig;

use super::steps;
use crate::error::ConfigError;

/// Whether the ensemble streams (some step's member is decoupled), or the
/// error of a step that reads tensors of two streams. `member` looks up a
/// step's model configuration by name; a member not found counts as not
/// decoupled (its absence is reported by `check_members`).
pub fn decoupled_flow<'a>(
    config: &ModelConfig,
    member: impl Fn(&str) -> Option<&'a ModelConfig>,
) -> Result<bool, ConfigError> {
    // Ensemble tensor -> the stream it belongs to: 0 for the request's
    // own tensors, a new number per decoupled step.
    let mut streams: HashMap<&str, usize> =
        config.input.iter().map(|t| (t.name.as_str(), 0)).collect();
    let mut streams_made = 0;
    let steps = steps(config);
    let mut done = vec![false; steps.len()];
    // Visit steps as their inputs become known, until none is left that can run.
    while let Some(index) = (0..steps.len()).find(|&i| {
        !done[i]
            && steps[i]
                .input_map
                .values()
                .all(|t| streams.contains_key(t.as_str()))
    }) {
        done[index] = true;
        let step = &steps[index];
        let mut inputs = step.input_map.values().map(|t| streams[t.as_str()]);
        let stream = inputs.next().unwrap_or(0);
        if inputs.any(|other| other != stream) {
            return Err(ConfigError::whole(format!(
                "in ensemble {}, step of model '{}' receives inputs originated from \
                 different decoupled models",
                config.name, step.model_name
            )));
        }
        let decoupled = member(&step.model_name)
            .and_then(|m| m.model_transaction_policy.as_ref())
            .is_some_and(|p| p.decoupled);
        let output_stream = if decoupled {
            streams_made += 1;
            streams_made
        } else {
            stream
        };
        for tensor in step.output_map.values() {
            streams.insert(tensor, output_stream);
        }
    }
    Ok(streams_made > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_config;

    fn parsed(text: &str) -> ModelConfig {
        parse_config(text, std::path::Path::new("config.pbtxt"))
            .unwrap()
            .config
    }

    const MEMBERS: [(&str, bool); 3] = [("plain", false), ("stream", true), ("other", true)];

    fn member(name: &str) -> Option<&'static ModelConfig> {
        use std::sync::OnceLock;
        static CONFIGS: OnceLock<Vec<(String, ModelConfig)>> = OnceLock::new();
        let configs = CONFIGS.get_or_init(|| {
            MEMBERS
                .iter()
                .map(|(name, decoupled)| {
                    let text = format!(
                        "name: \"{name}\" backend: \"python\" \
                         model_transaction_policy {{ decoupled: {decoupled} }}"
                    );
                    (name.to_string(), parsed(&text))
                })
                .collect()
        });
        configs.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    fn ensemble(steps: &str) -> ModelConfig {
        parsed(&format!(
            "name: \"e\" platform: \"ensemble\" \
             input [ {{ name: \"IN\" data_type: TYPE_INT32 dims: [ 1 ] }} ] \
             output [ {{ name: \"OUT\" data_type: TYPE_INT32 dims: [ 1 ] }} ] \
             ensemble_scheduling {{ step [ {steps} ] }}"
        ))
    }

    fn step(model: &str, inputs: &[(&str, &str)], output: &str) -> String {
        let inputs: String = inputs
            .iter()
            .map(|(k, v)| format!("input_map {{ key: \"{k}\" value: \"{v}\" }} "))
            .collect();
        format!(
            "{{ model_name: \"{model}\" model_version: -1 {inputs} \
             output_map {{ key: \"Y\" value: \"{output}\" }} }}"
        )
    }

    #[test]
    fn a_decoupled_member_makes_the_ensemble_decoupled() {
        let chain = [
            step("plain", &[("X", "IN")], "ids"),
            step("stream", &[("X", "ids")], "token"),
            step("plain", &[("X", "token")], "OUT"),
        ]
        .join(", ");
        assert_eq!(decoupled_flow(&ensemble(&chain), member), Ok(true));
        let plain = step("plain", &[("X", "IN")], "OUT");
        assert_eq!(decoupled_flow(&ensemble(&plain), member), Ok(false));
    }

    #[test]
    fn a_step_may_not_mix_streams() {
        let mixed = [
            step("stream", &[("X", "IN")], "token"),
            step("plain", &[("A", "token"), ("B", "IN")], "OUT"),
        ]
        .join(", ");
        let error = decoupled_flow(&ensemble(&mixed), member).unwrap_err();
        assert!(
            error.to_string().contains(
                "step of model 'plain' receives inputs originated from different decoupled models"
            ),
            "{error}"
        );
        let two_streams = [
            step("stream", &[("X", "IN")], "a"),
            step("other", &[("X", "IN")], "b"),
            step("plain", &[("A", "a"), ("B", "b")], "OUT"),
        ]
        .join(", ");
        assert!(decoupled_flow(&ensemble(&two_streams), member).is_err());
    }
}
