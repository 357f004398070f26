//! Dynamic and sequence batching settings.

use std::collections::HashMap;

use oxiserve_proto::{
    ModelConfig,
    inference::{
        DataType, ModelDynamicBatching, ModelSequenceBatching,
        model_config::SchedulingChoice,
        model_queue_policy::TimeoutAction,
        model_sequence_batching::{StrategyChoice, control::Kind as ControlKind},
    },
};

use crate::{batch_padding::BatchPadding, error::ConfigError};

pub(super) fn check(config: &ModelConfig, errors: &mut Vec<ConfigError>) {
    match &config.scheduling_choice {
        Some(SchedulingChoice::DynamicBatching(db)) => {
            check_dynamic(db, config.max_batch_size, errors);
            // oxiserve's padding parameters, which only the dynamic batcher reads.
            if let Err(e) = BatchPadding::of(config) {
                errors.push(ConfigError::field(
                    format!("parameters.{}", e.parameter),
                    e.to_string(),
                ));
            }
        }
        Some(SchedulingChoice::SequenceBatching(sb)) => {
            check_sequence(sb, config.max_batch_size, errors)
        }
        _ => {}
    }
}

fn check_preferred(path: &str, sizes: &[i32], max_batch_size: i32, errors: &mut Vec<ConfigError>) {
    for &size in sizes {
        if size <= 0 {
            errors.push(ConfigError::field(
                path,
                format!("preferred batch size {size} must be positive"),
            ));
        } else if size > max_batch_size {
            errors.push(ConfigError::field(
                path,
                format!(
                    "preferred batch size {size} is larger than max_batch_size {max_batch_size}"
                ),
            ));
        }
    }
}

fn check_dynamic(db: &ModelDynamicBatching, max_batch_size: i32, errors: &mut Vec<ConfigError>) {
    check_preferred(
        "dynamic_batching.preferred_batch_size",
        &db.preferred_batch_size,
        max_batch_size,
        errors,
    );
    let levels = db.priority_levels;
    if levels != 0 {
        if db.default_priority_level == 0 || db.default_priority_level > levels {
            errors.push(ConfigError::field(
                "dynamic_batching.default_priority_level",
                format!(
                    "must be in [1, {levels}] when priority_levels is {levels}, got {}",
                    db.default_priority_level
                ),
            ));
        }
        for level in db
            .priority_queue_policy
            .keys()
            .filter(|l| **l == 0 || **l > levels)
        {
            errors.push(ConfigError::field(
                "dynamic_batching.priority_queue_policy",
                format!("priority level {level} is outside [1, {levels}]"),
            ));
        }
    }
    if db.preserve_ordering {
        if levels > 1 {
            errors.push(ConfigError::field(
                "dynamic_batching.preserve_ordering",
                "only one priority level is allowed when 'preserve_ordering' is true",
            ));
        }
        let delays = db
            .default_queue_policy
            .iter()
            .chain(db.priority_queue_policy.values())
            .any(|p| {
                p.default_timeout_microseconds != 0 && p.timeout_action() == TimeoutAction::Delay
            });
        if delays {
            errors.push(ConfigError::field(
                "dynamic_batching.preserve_ordering",
                "a queue policy cannot use timeout_action DELAY when 'preserve_ordering' is true",
            ));
        }
    }
}

fn check_sequence(sb: &ModelSequenceBatching, max_batch_size: i32, errors: &mut Vec<ConfigError>) {
    match &sb.strategy_choice {
        Some(StrategyChoice::Oldest(o)) => check_preferred(
            "sequence_batching.oldest.preferred_batch_size",
            &o.preferred_batch_size,
            max_batch_size,
            errors,
        ),
        Some(StrategyChoice::Direct(d)) if !(0.0..=1.0).contains(&d.minimum_slot_utilization) => {
            errors.push(ConfigError::field(
                "sequence_batching.direct.minimum_slot_utilization",
                format!("must be in [0.0, 1.0], got {}", d.minimum_slot_utilization),
            ))
        }
        _ => {}
    }
    let mut seen: HashMap<ControlKind, &str> = HashMap::new();
    for (i, input) in sb.control_input.iter().enumerate() {
        let path = format!("sequence_batching.control_input[{i}]");
        if input.name.is_empty() {
            errors.push(ConfigError::field(
                format!("{path}.name"),
                "a control input must have a name",
            ));
        }
        if input.control.len() > 1 {
            errors.push(ConfigError::field(
                format!("{path}.control"),
                format!(
                    "control input '{}' has {} controls; give each control kind its own tensor",
                    input.name,
                    input.control.len()
                ),
            ));
        }
        for (j, control) in input.control.iter().enumerate() {
            let cpath = format!("{path}.control[{j}]");
            let kind = control.kind();
            if let Some(first) = seen.insert(kind, &input.name) {
                errors.push(ConfigError::field(
                    format!("{cpath}.kind"),
                    format!(
                        "{} is already given by control input '{first}'",
                        kind.as_str_name()
                    ),
                ));
            }
            check_control_values(&cpath, control, errors);
        }
    }
}

fn check_control_values(
    path: &str,
    control: &oxiserve_proto::inference::model_sequence_batching::Control,
    errors: &mut Vec<ConfigError>,
) {
    let lists = [
        ("int32_false_true", control.int32_false_true.len()),
        ("fp32_false_true", control.fp32_false_true.len()),
        ("bool_false_true", control.bool_false_true.len()),
    ];
    let given: Vec<_> = lists.iter().filter(|(_, n)| *n > 0).collect();
    let kind = control.kind();
    if kind == ControlKind::ControlSequenceCorrid {
        if !given.is_empty() {
            errors.push(ConfigError::field(
                path,
                "CONTROL_SEQUENCE_CORRID takes a data_type, not int32/fp32/bool_false_true values",
            ));
        }
        let allowed = [
            DataType::TypeUint64,
            DataType::TypeInt64,
            DataType::TypeUint32,
            DataType::TypeInt32,
            DataType::TypeString,
        ];
        if !allowed.contains(&control.data_type()) {
            errors.push(ConfigError::field(
                format!("{path}.data_type"),
                format!(
                    "CONTROL_SEQUENCE_CORRID data_type must be TYPE_UINT64, TYPE_INT64, TYPE_UINT32, \
                     TYPE_INT32 or TYPE_STRING, got {}",
                    control.data_type().as_str_name()
                ),
            ));
        }
        return;
    }
    match given.as_slice() {
        [] => errors.push(ConfigError::field(
            path,
            format!(
                "{} must give 'int32_false_true', 'fp32_false_true' or 'bool_false_true'",
                kind.as_str_name()
            ),
        )),
        [(name, n)] if *n != 2 => errors.push(ConfigError::field(
            format!("{path}.{name}"),
            format!("must have exactly 2 entries (false, true), got {n}"),
        )),
        [_] => {}
        _ => errors.push(ConfigError::field(
            path,
            "give only one of 'int32_false_true', 'fp32_false_true' and 'bool_false_true'",
        )),
    }
}
