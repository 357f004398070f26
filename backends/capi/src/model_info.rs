//! What the request, response and state functions need to know of the
//! model they serve: its name, its outputs and its implicit states.

use oxiserve_proto::{ModelConfig, inference::model_config::SchedulingChoice};
use oxiserve_types::DataType;

/// One `sequence_batching.state` entry.
#[derive(Debug, Clone)]
pub struct StateInfo {
    pub output_name: String,
    pub dtype: Option<DataType>,
}

/// A loaded model as its requests see it.
#[derive(Debug, Clone, Default)]
pub struct ModelInfo {
    pub name: String,
    /// The outputs of its configuration.
    pub outputs: Vec<String>,
    /// Its implicit states; empty without any.
    pub states: Vec<StateInfo>,
}

impl ModelInfo {
    /// The model `config` describes.
    pub fn of(config: &ModelConfig) -> Self {
        let states = match &config.scheduling_choice {
            Some(SchedulingChoice::SequenceBatching(batching)) => batching
                .state
                .iter()
                .map(|s| StateInfo {
                    output_name: s.output_name.clone(),
                    dtype: DataType::from_config_number(s.data_type),
                })
                .collect(),
            _ => Vec::new(),
        };
        Self {
            name: config.name.clone(),
            outputs: config.output.iter().map(|o| o.name.clone()).collect(),
            states,
        }
    }

    /// Whether a response may carry an output called `name`: one of the
    /// configuration's outputs or a state's output.
    pub fn has_output(&self, name: &str) -> bool {
        self.outputs.iter().any(|o| o == name) || self.states.iter().any(|s| s.output_name == name)
    }
}
