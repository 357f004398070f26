//! Every model configuration in the seed documents: the valid ones parse to
//! the values written, the broken ones fail with the exact error and position.

use std::{fs, path::Path};

use oxiserve_config::{ModelConfig, ModelFolder, complete_config, parse_config};

fn text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seeds")
        .join(name);
    fs::read_to_string(path).unwrap()
}

/// Parses and completes the seed `name` as the model `model` whose first
/// version folder holds `file`; returns every problem as "line:col: message".
fn outcome(name: &str, model: &str, file: &str) -> Result<ModelConfig, Vec<String>> {
    let path = Path::new(name);
    let parsed = parse_config(&text(name), path).map_err(|e| vec![e.to_string()])?;
    let folder = ModelFolder {
        name: model.into(),
        first_version: Some([(file.to_string(), false)].into()),
        gpus: vec![],
    };
    complete_config(parsed.config, &folder).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| e.locate(path, Some(&parsed.source_map)).to_string())
            .collect()
    })
}

fn problems(name: &str, model: &str, file: &str) -> Vec<String> {
    outcome(name, model, file).err().unwrap_or_default()
}

fn dims(config: &ModelConfig) -> Vec<(String, Vec<i64>)> {
    config
        .input
        .iter()
        .map(|t| (t.name.clone(), t.dims.clone()))
        .chain(
            config
                .output
                .iter()
                .map(|t| (t.name.clone(), t.dims.clone())),
        )
        .collect()
}

#[test]
fn seed_000_ensemble_placeholder_is_reported_where_it_stands() {
    // The tutorial writes `{...}` for "fill in the tensors".
    assert_eq!(
        problems("000_ensemble.pbtxt", "Ensemble", ""),
        ["000_ensemble.pbtxt:6:6: unexpected character '.'"]
    );
}

#[test]
fn seed_001_bert_two_int32_inputs() {
    let c = outcome("001_bert.pbtxt", "bert", "model.pt").unwrap();
    assert_eq!(
        (c.platform.as_str(), c.backend.as_str(), c.max_batch_size),
        ("pytorch_libtorch", "pytorch", 32)
    );
    assert_eq!(
        dims(&c),
        [
            ("input__0".into(), vec![256]),
            ("input__1".into(), vec![256]),
            ("output__0".into(), vec![2])
        ]
    );
    assert_eq!(
        c.input[0].data_type,
        oxiserve_proto::inference::DataType::TypeInt32 as i32
    );
    assert_eq!(
        problems("001_bert.pbtxt", "bert2", "model.pt"),
        [
            "001_bert.pbtxt:1:1: name: name \"bert\" differs from the model's folder name 'bert2'; they must be equal (or leave 'name' out)"
        ]
    );
}

#[test]
fn seed_002_demos() {
    let c = outcome("002_demo1.pbtxt", "m", "model.plan").unwrap();
    assert_eq!(
        (c.backend.as_str(), c.platform.as_str(), c.max_batch_size),
        ("tensorrt", "tensorrt_plan", 8)
    );
    assert_eq!(dims(&c)[0], ("input0".into(), vec![3, 244, 244]));
    let c = outcome("002_demo2.pbtxt", "m", "model.plan").unwrap();
    assert_eq!(c.max_batch_size, 0);
    let c = outcome("002_demo3.pbtxt", "m", "model.pt").unwrap();
    assert_eq!(
        c.input[0].format(),
        oxiserve_proto::inference::model_input::Format::Nchw
    );
    assert_eq!(dims(&c)[0], ("input0".into(), vec![3, -1, -1]));
    assert_eq!(c.output[0].reshape.as_ref().unwrap().shape, [1, 16]);
    assert_eq!(c.output[0].label_filename, "labels.txt");
    let c = outcome("002_demo4.pbtxt", "m", "model.plan").unwrap();
    assert_eq!(c.input[0].reshape.as_ref().unwrap().shape, [1, 3, 244, 244]);
    assert_eq!(c.output[0].reshape.as_ref().unwrap().shape, [1, 16, 1, 1]);
}

#[test]
fn seed_002_version_policies() {
    use oxiserve_proto::inference::model_version_policy::PolicyChoice;
    let c = outcome("002_version_policy_all.pbtxt", "m", "model.onnx").unwrap();
    assert!(matches!(
        c.version_policy.unwrap().policy_choice,
        Some(PolicyChoice::All(_))
    ));
    let c = outcome("002_version_policy_latest.pbtxt", "m", "model.onnx").unwrap();
    assert!(
        matches!(c.version_policy.unwrap().policy_choice, Some(PolicyChoice::Latest(l)) if l.num_versions == 2)
    );
    // `versions: 1, 2` is not a list in text format (Triton rejects it too).
    assert_eq!(
        problems("002_version_policy_specific.pbtxt", "m", "model.onnx"),
        [
            "002_version_policy_specific.pbtxt:1:41: expected a field name or '}' to close 'specific' opened at 1:18, found 2; \
          to give 'versions' several values write 'versions: [a, b]'"
        ]
    );
}

#[test]
fn seed_002_instance_group_missing_comma() {
    assert_eq!(
        problems("002_instance_group.pbtxt", "m", "model.onnx"),
        [
            "002_instance_group.pbtxt:7:4: expected ',' or ']' in the list of 'instance_group', found '{' (separate list elements with ',')"
        ]
    );
}

#[test]
fn seed_002_simple_default_scheduler() {
    let c = outcome("002_simple.pbtxt", "simple", "model.plan").unwrap();
    assert_eq!((c.max_batch_size, c.scheduling_choice.is_none()), (8, true));
    assert_eq!(
        (c.instance_group[0].name.as_str(), c.instance_group[0].count),
        ("simple", 1)
    );
}

#[test]
fn seed_002_dynamic_batching_needs_a_batching_model() {
    // Alone, the snippet has max_batch_size 0, so its preferred sizes are too large.
    assert_eq!(
        problems("002_dynamic_batching.pbtxt", "m", "model.onnx"),
        [
            "002_dynamic_batching.pbtxt:4:4: dynamic_batching.preferred_batch_size: preferred batch size 4 is larger than max_batch_size 0",
            "002_dynamic_batching.pbtxt:4:4: dynamic_batching.preferred_batch_size: preferred batch size 8 is larger than max_batch_size 0",
        ]
    );
    let text = format!("max_batch_size: 8\n{}", text("002_dynamic_batching.pbtxt"));
    let parsed = parse_config(&text, Path::new("x")).unwrap();
    let folder = ModelFolder {
        name: "m".into(),
        first_version: Some([("model.onnx".into(), false)].into()),
        gpus: vec![],
    };
    let c = complete_config(parsed.config, &folder).unwrap();
    let Some(oxiserve_proto::inference::model_config::SchedulingChoice::DynamicBatching(db)) =
        c.scheduling_choice
    else {
        panic!()
    };
    assert_eq!(
        (db.preferred_batch_size, db.max_queue_delay_microseconds),
        (vec![4, 8], 100)
    );
}

#[test]
fn seed_002_sequence_batching() {
    use oxiserve_proto::inference::model_config::SchedulingChoice;
    let c = outcome("002_sequence_batching.pbtxt", "m", "model.onnx").unwrap();
    let Some(SchedulingChoice::SequenceBatching(sb)) = c.scheduling_choice else {
        panic!()
    };
    assert_eq!(sb.max_sequence_idle_microseconds, 5_000_000);
    assert_eq!(sb.control_input[0].name, "START");
    assert_eq!(sb.control_input[0].control[0].int32_false_true, [0, 1]);
}

#[test]
fn seed_002_optimization_accelerators() {
    let c = outcome("002_optimization.pbtxt", "m", "model.onnx").unwrap();
    let acc = &c
        .optimization
        .unwrap()
        .execution_accelerators
        .unwrap()
        .gpu_execution_accelerator[0];
    assert_eq!(acc.name, "tensorrt");
    assert_eq!(acc.parameters["precision_mode"], "FP16");
    assert_eq!(acc.parameters["max_workspace_size_bytes"], "1073741824");
}

#[test]
fn seed_002_model_warmup_field_typo() {
    assert_eq!(
        problems("002_model_warmup.pbtxt", "m", "model.onnx"),
        [
            "002_model_warmup.pbtxt:5:7: unknown field 'input' in inference.ModelWarmup; did you mean 'inputs'?"
        ]
    );
    let fixed = text("002_model_warmup.pbtxt").replace("      input {", "      inputs {");
    let parsed = parse_config(&fixed, Path::new("x")).unwrap();
    let warmup = &parsed.config.model_warmup[0];
    assert_eq!(
        (warmup.batch_size, warmup.inputs["input"].dims.as_slice()),
        (64, &[3, 244, 244][..])
    );
}

#[test]
fn seed_002_ensemble_typos() {
    assert_eq!(
        problems("002_ensemble.pbtxt", "ensemble_model", ""),
        [
            "002_ensemble.pbtxt:40:13: unknown field 'vlaue' in inference.ModelEnsembling.Step.OutputMapEntry; did you mean 'value'?"
        ]
    );
    let fixed = text("002_ensemble.pbtxt").replace("vlaue", "value");
    let parsed = parse_config(&fixed, Path::new("x"));
    assert_eq!(
        parsed.unwrap_err().to_string(),
        "x:47:10: unknown field 'imput_map' in inference.ModelEnsembling.Step; did you mean 'input_map'?"
    );
    let fixed = fixed.replace("imput_map", "input_map");
    let parsed = parse_config(&fixed, Path::new("x")).unwrap();
    let folder = ModelFolder {
        name: "ensemble_model".into(),
        first_version: Some(Default::default()),
        gpus: vec![],
    };
    let c = complete_config(parsed.config, &folder).unwrap();
    let Some(oxiserve_proto::inference::model_config::SchedulingChoice::EnsembleScheduling(e)) =
        c.scheduling_choice
    else {
        panic!()
    };
    assert_eq!(e.step.len(), 3);
    assert_eq!(e.step[2].output_map["segmentation_output"], "segmentation");
}

#[test]
fn seed_003_handwriting_nhwc_with_labels() {
    let c = outcome("003_handwriting.pbtxt", "handwriting", "model.onnx").unwrap();
    assert_eq!(
        (c.platform.as_str(), c.backend.as_str(), c.max_batch_size),
        ("onnxruntime_onnx", "onnxruntime", 32)
    );
    assert_eq!(
        c.input[0].format(),
        oxiserve_proto::inference::model_input::Format::Nhwc
    );
    assert_eq!(c.output[0].label_filename, "labels.txt");
    assert_eq!(
        (c.instance_group[0].count, c.default_model_filename.as_str()),
        (2, "model.onnx")
    );
}

#[test]
fn every_seed_fixture_is_covered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seeds");
    let source = include_str!("seeds.rs");
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".pbtxt") {
            assert!(
                source.contains(&format!("\"{name}\"")),
                "no test reads {name}"
            );
        }
    }
}
