//! Ensemble graph checks and member checks.

use std::path::Path;

use super::*;
use crate::{ModelFolder, complete_config, parse_config};

fn parse(text: &str, name: &str) -> Result<ModelConfig, Vec<String>> {
    let parsed = parse_config(text, Path::new("config.pbtxt")).unwrap_or_else(|e| panic!("{e}"));
    let first_version = if text.contains("\"ensemble\"") {
        Default::default()
    } else {
        [("model.py".to_string(), false)].into()
    };
    let folder = ModelFolder {
        name: name.into(),
        first_version: Some(first_version),
        gpus: vec![],
    };
    complete_config(parsed.config, &folder).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| {
                let e = e.locate(Path::new("config.pbtxt"), Some(&parsed.source_map));
                let p = e.position.unwrap();
                format!("{}:{}: {}: {}", p.line, p.column, e.field, e.message)
            })
            .collect()
    })
}

fn ensemble(steps: &str) -> String {
    format!(
        r#"platform: "ensemble"
max_batch_size: 4
input [ {{ name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }} ]
output [ {{ name: "EMB" data_type: TYPE_FP32 dims: [ 8 ] }} ]
ensemble_scheduling {{
  step [
{steps}
  ]
}}"#
    )
}

const TOKENIZE: &str = r#"    { model_name: "tokenizer" model_version: -1 input_map { key: "text" value: "TEXT" } output_map { key: "ids" value: "IDS" } },"#;
const ENCODE: &str = r#"    { model_name: "encoder" model_version: -1 input_map { key: "input_ids" value: "IDS" } output_map { key: "embedding" value: "EMB" } }"#;

#[test]
fn two_step_pipeline_is_valid() {
    assert_eq!(
        parse(&ensemble(&format!("{TOKENIZE}\n{ENCODE}")), "e").err(),
        None
    );
}

#[test]
fn unknown_tensor_with_suggestion() {
    let encode = ENCODE.replace("value: \"IDS\"", "value: \"IDZ\"");
    let errors = parse(&ensemble(&format!("{TOKENIZE}\n{encode}")), "e").unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].starts_with("8:47: ensemble_scheduling.step[1].input_map: step 1 ('encoder') reads tensor 'IDZ': no step writes it and it is not an ensemble input; did you mean 'IDS'?"), "{errors:?}");
    assert!(
        errors[1].contains(
            "ensemble tensor 'IDS' is written but neither read by a step nor an ensemble output"
        ),
        "{errors:?}"
    );
}

#[test]
fn cycle_is_reported() {
    let a = r#"    { model_name: "a" input_map [ { key: "x" value: "TEXT" }, { key: "y" value: "B" } ] output_map { key: "o" value: "A" } },"#;
    let b = r#"    { model_name: "b" input_map { key: "x" value: "A" } output_map [ { key: "o" value: "B" }, { key: "p" value: "EMB" } ] }"#;
    let errors = parse(&ensemble(&format!("{a}\n{b}")), "e").unwrap_err();
    assert!(errors.iter().any(|e| e.contains("step 0 ('a') reads tensor 'B': step 1 writes it but depends on step 0: the steps form a cycle")), "{errors:#?}");
}

#[test]
fn unused_input_and_unwritten_output() {
    let only = r#"    { model_name: "t" input_map { key: "x" value: "OTHER" } output_map { key: "o" value: "Z" } }"#;
    let errors = parse(&ensemble(only), "e").unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("3:9: input[0]: ensemble input 'TEXT' is not used by any step")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e
                .starts_with("4:10: output[0]: ensemble output 'EMB' is not written by any step")),
        "{errors:#?}"
    );
}

#[test]
fn tensor_written_twice() {
    let a = r#"    { model_name: "a" input_map { key: "x" value: "TEXT" } output_map { key: "o" value: "EMB" } }"#;
    let errors = parse(&ensemble(&format!("{a},\n{a}")), "e").unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("ensemble tensor 'EMB' is already written by step 0")),
        "{errors:#?}"
    );
}

#[test]
fn ensemble_must_not_have_instance_groups_or_steps_missing_maps() {
    let text = ensemble(r#"    { model_name: "a" }"#) + "\ninstance_group [ { count: 1 } ]";
    let errors = parse(&text, "e").unwrap_err();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("an ensemble must not set 'instance_group'")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("step 0 ('a') must specify 'input_map'")),
        "{errors:#?}"
    );
}

#[test]
fn members_are_checked_by_name_and_type() {
    let ensemble = parse(&ensemble(&format!("{TOKENIZE}\n{ENCODE}")), "e").unwrap();
    let tokenizer = parse(
        r#"backend: "python"
max_batch_size: 4
input { name: "text" data_type: TYPE_STRING dims: [ 1 ] }
output { name: "ids" data_type: TYPE_INT64 dims: [ -1 ] }"#,
        "tokenizer",
    )
    .unwrap();
    let encoder = parse(
        r#"backend: "python"
max_batch_size: 4
input { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] }
output { name: "embeding" data_type: TYPE_FP32 dims: [ 8 ] }"#,
        "encoder",
    )
    .unwrap();
    let names = ["tokenizer", "encoder", "e"];
    let lookup = |name: &str| match name {
        "tokenizer" => Some(&tokenizer),
        "encoder" => Some(&encoder),
        _ => None,
    };
    let errors: Vec<String> = check_members(&ensemble, &names, lookup)
        .into_iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    assert_eq!(
        errors,
        [
            "ensemble_scheduling.step[1].input_map[\"input_ids\"]: ensemble tensor 'IDS' is TYPE_INT64 as output 'ids' of model 'tokenizer' but TYPE_INT32 as input 'input_ids' of model 'encoder'",
            "ensemble_scheduling.step[1].output_map[\"embedding\"]: model 'encoder' has no output 'embedding'; did you mean 'embeding'?",
        ]
    );
    let missing = |_: &str| None;
    let errors = check_members(&ensemble, &["tokenize"], missing);
    assert_eq!(
        errors[0].message,
        "model 'tokenizer' is not in the model repository; did you mean 'tokenize'?"
    );
}
