//! Ensemble checks: the step graph on its own, and the steps against the
//! member models' inputs and outputs.

use std::collections::{HashMap, HashSet};

use oxiserve_proto::{
    ModelConfig,
    inference::{DataType, model_config::SchedulingChoice, model_ensembling::Step},
};

use crate::{error::ConfigError, suggest::did_you_mean};

mod decoupled;

pub use decoupled::decoupled_flow;

fn steps(config: &ModelConfig) -> &[Step] {
    match &config.scheduling_choice {
        Some(SchedulingChoice::EnsembleScheduling(e)) => &e.step,
        _ => &[],
    }
}

/// Checks an ensemble's own configuration: fields an ensemble must not set, each
/// step's maps, and that the steps connect the ensemble inputs to its outputs.
pub(crate) fn check_graph(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    let mut push = |field: String, message: String| errors.push(ConfigError::field(field, message));
    if config.platform != crate::platform::ENSEMBLE_PLATFORM {
        push(
            "ensemble_scheduling".into(),
            format!(
                "only a model with platform \"ensemble\" may set 'ensemble_scheduling' (platform is \"{}\")",
                config.platform
            ),
        );
    }
    if !config.instance_group.is_empty() {
        push(
            "instance_group".into(),
            "an ensemble must not set 'instance_group'; its steps' models have their own".into(),
        );
    }
    if config.optimization.is_some() {
        push(
            "optimization".into(),
            "an ensemble must not set 'optimization'".into(),
        );
    }
    if !config.model_warmup.is_empty() {
        push(
            "model_warmup".into(),
            "an ensemble must not set 'model_warmup'".into(),
        );
    }
    let steps = steps(config);
    if steps.is_empty() {
        push(
            "ensemble_scheduling".into(),
            "must specify at least one 'step'".into(),
        );
        return;
    }
    let mut producers: HashMap<&str, usize> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        let path = format!("ensemble_scheduling.step[{i}]");
        if step.model_name.is_empty() {
            push(
                format!("{path}.model_name"),
                "must specify 'model_name'".into(),
            );
        }
        if step.input_map.is_empty() {
            push(
                path.clone(),
                format!("step {i} ('{}') must specify 'input_map'", step.model_name),
            );
        }
        if step.output_map.is_empty() {
            push(
                path.clone(),
                format!("step {i} ('{}') must specify 'output_map'", step.model_name),
            );
        }
        for tensor in step.output_map.values() {
            if let Some(first) = producers.insert(tensor, i) {
                push(
                    format!("{path}.output_map"),
                    format!(
                        "ensemble tensor '{tensor}' is already written by step {first}; a tensor can be written only once"
                    ),
                );
            }
        }
    }
    check_flow(config, steps, &producers, errors);
}

/// Runs the steps symbolically from the ensemble inputs and reports what never
/// becomes available, what is unused, and cycles.
fn check_flow(
    config: &ModelConfig,
    steps: &[Step],
    producers: &HashMap<&str, usize>,
    errors: &mut Vec<ConfigError>,
) {
    let inputs: HashSet<&str> = config.input.iter().map(|t| t.name.as_str()).collect();
    let outputs: HashSet<&str> = config.output.iter().map(|t| t.name.as_str()).collect();
    let mut ready: HashSet<&str> = inputs.clone();
    let mut done = vec![false; steps.len()];
    loop {
        let runnable: Vec<usize> = (0..steps.len())
            .filter(|&i| {
                !done[i]
                    && steps[i]
                        .input_map
                        .values()
                        .all(|t| ready.contains(t.as_str()))
            })
            .collect();
        if runnable.is_empty() {
            break;
        }
        for i in runnable {
            done[i] = true;
            ready.extend(steps[i].output_map.values().map(String::as_str));
        }
    }
    let consumed: HashSet<&str> = steps
        .iter()
        .flat_map(|s| s.input_map.values().map(String::as_str))
        .collect();
    for (i, step) in steps.iter().enumerate().filter(|(i, _)| !done[*i]) {
        for tensor in step
            .input_map
            .values()
            .filter(|t| !ready.contains(t.as_str()))
        {
            let why = match producers.get(tensor.as_str()) {
                None => format!(
                    "no step writes it and it is not an ensemble input{}",
                    did_you_mean(
                        tensor,
                        inputs.iter().copied().chain(producers.keys().copied())
                    )
                ),
                Some(&p) if reaches(steps, p, i) => {
                    format!("step {p} writes it but depends on step {i}: the steps form a cycle")
                }
                Some(&p) => format!("step {p} writes it but cannot run"),
            };
            errors.push(ConfigError::field(
                format!("ensemble_scheduling.step[{i}].input_map"),
                format!(
                    "step {i} ('{}') reads tensor '{tensor}': {why}",
                    step.model_name
                ),
            ));
        }
    }
    for (i, input) in config.input.iter().enumerate() {
        if !consumed.contains(input.name.as_str()) {
            errors.push(ConfigError::field(
                format!("input[{i}]"),
                format!("ensemble input '{}' is not used by any step", input.name),
            ));
        }
    }
    for (i, output) in config.output.iter().enumerate() {
        if !producers.contains_key(output.name.as_str()) {
            errors.push(ConfigError::field(
                format!("output[{i}]"),
                format!(
                    "ensemble output '{}' is not written by any step",
                    output.name
                ),
            ));
        }
    }
    for (tensor, step) in producers {
        if !consumed.contains(tensor) && !outputs.contains(tensor) {
            errors.push(ConfigError::field(
                format!("ensemble_scheduling.step[{step}].output_map"),
                format!("ensemble tensor '{tensor}' is written but neither read by a step nor an ensemble output"),
            ));
        }
    }
}

/// Whether step `from` depends, through tensors, on step `to`.
fn reaches(steps: &[Step], from: usize, to: usize) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(s) = stack.pop() {
        if s == to {
            return true;
        }
        if !seen.insert(s) {
            continue;
        }
        for t in steps[s].input_map.values() {
            stack.extend(
                steps
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.output_map.values().any(|o| o == t))
                    .map(|(j, _)| j),
            );
        }
    }
    false
}

/// Checks each step against its member model: the model exists, the mapped
/// input and output names exist, and data types agree along every tensor.
/// `member` looks up a model's configuration by name.
pub fn check_members<'a>(
    config: &ModelConfig,
    model_names: &[&str],
    member: impl Fn(&str) -> Option<&'a ModelConfig>,
) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    // Ensemble tensor -> (data type, who declared it).
    let mut types: HashMap<&str, (i32, String)> = HashMap::new();
    for t in &config.input {
        types.insert(
            &t.name,
            (t.data_type, format!("ensemble input '{}'", t.name)),
        );
    }
    for t in &config.output {
        types.insert(
            &t.name,
            (t.data_type, format!("ensemble output '{}'", t.name)),
        );
    }
    for (i, step) in steps(config).iter().enumerate() {
        let path = format!("ensemble_scheduling.step[{i}]");
        let Some(model) = member(&step.model_name) else {
            errors.push(ConfigError::field(
                format!("{path}.model_name"),
                format!(
                    "model '{}' is not in the model repository{}",
                    step.model_name,
                    did_you_mean(&step.model_name, model_names.iter().copied())
                ),
            ));
            continue;
        };
        let maps = [
            (
                "input_map",
                &step.input_map,
                model
                    .input
                    .iter()
                    .map(|t| (t.name.as_str(), t.data_type))
                    .collect::<Vec<_>>(),
            ),
            (
                "output_map",
                &step.output_map,
                model
                    .output
                    .iter()
                    .map(|t| (t.name.as_str(), t.data_type))
                    .collect(),
            ),
        ];
        for (map_name, map, declared) in maps {
            let kind = if map_name == "input_map" {
                "input"
            } else {
                "output"
            };
            for (member_tensor, ensemble_tensor) in map {
                let field = format!("{path}.{map_name}[\"{member_tensor}\"]");
                let Some(&(_, dt)) = declared.iter().find(|(n, _)| n == member_tensor) else {
                    errors.push(ConfigError::field(
                        field,
                        format!(
                            "model '{}' has no {kind} '{member_tensor}'{}",
                            step.model_name,
                            did_you_mean(member_tensor, declared.iter().map(|(n, _)| *n))
                        ),
                    ));
                    continue;
                };
                let this = format!("{kind} '{member_tensor}' of model '{}'", step.model_name);
                match types.get(ensemble_tensor.as_str()) {
                    Some((other, who)) if *other != dt && dt != DataType::TypeInvalid as i32 => {
                        errors.push(ConfigError::field(
                            field,
                            format!(
                                "ensemble tensor '{ensemble_tensor}' is {} as {who} but {} as {this}",
                                type_name(*other),
                                type_name(dt)
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        types.insert(ensemble_tensor, (dt, this));
                    }
                }
            }
        }
    }
    errors
}

fn type_name(dt: i32) -> &'static str {
    DataType::try_from(dt).map_or("an unknown type", |t| t.as_str_name())
}

#[cfg(test)]
mod tests;
