//! Complete, realistic configs parsed and transcoded into the prost `ModelConfig`.

use oxiserve_proto::inference::{
    DataType, ModelParameter, model_config::SchedulingChoice, model_instance_group,
    model_queue_policy, model_sequence_batching, model_version_policy, model_warmup,
};

use super::{at, config, parse_ok};

const IMAGE_MODEL: &str = r#"
# A realistic config.pbtxt touching most of Triton's fields.
name: "densenet_onnx"
platform: "onnxruntime_onnx"
max_batch_size: 8
version_policy: { specific: { versions: [1, 3] } }
input [
  {
    name: "data_0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, 224, 224 ]
    reshape: { shape: [ 1, 3, 224, 224 ] }
  }
]
output [
  {
    name: "fc6_1"
    data_type: TYPE_FP32
    dims: [ 1000 ]
    reshape { shape: [ 1, 1000, 1, 1 ] }
    label_filename: "densenet_labels.txt"
  }
]
instance_group [
  { count: 2, kind: KIND_GPU, gpus: [ 0, 1 ] },
  { count: 1 kind: KIND_CPU }
]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 5000 }
  priority_queue_policy {
    key: 1
    value: { max_queue_size: 16 allow_timeout_override: true }
  }
  priority_queue_policy [ { key: 2 value { timeout_action: REJECT } } ]
}
parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }
parameters: { key: "threads" value { string_value: "4" } }
model_warmup [
  {
    name: "warmup"
    batch_size: 8
    inputs {
      key: "data_0"
      value: { data_type: TYPE_FP32 dims: [ 3, 224, 224 ] zero_data: true }
    }
  }
]
optimization { execution_accelerators { gpu_execution_accelerator: [ { name: "tensorrt" parameters { key: "precision_mode" value: "FP16" } } ] } }
"#;

#[test]
fn image_model_transcodes_to_model_config() {
    let config = config(IMAGE_MODEL);
    assert_eq!(config.name, "densenet_onnx");
    assert_eq!(config.platform, "onnxruntime_onnx");
    assert_eq!(config.max_batch_size, 8);

    let policy = config.version_policy.and_then(|p| p.policy_choice);
    let Some(model_version_policy::PolicyChoice::Specific(specific)) = policy else {
        panic!("specific version policy expected, got {policy:?}");
    };
    assert_eq!(specific.versions, [1, 3]);

    let [input] = config.input.as_slice() else {
        panic!("one input expected");
    };
    assert_eq!(input.name, "data_0");
    assert_eq!(input.data_type, DataType::TypeFp32 as i32);
    assert_eq!(input.format, 2);
    assert_eq!(input.dims, [3, 224, 224]);
    assert_eq!(
        input.reshape.as_ref().map(|r| r.shape.clone()),
        Some(vec![1, 3, 224, 224])
    );

    let [output] = config.output.as_slice() else {
        panic!("one output expected");
    };
    assert_eq!(output.dims, [1000]);
    assert_eq!(output.label_filename, "densenet_labels.txt");
    assert_eq!(
        output.reshape.as_ref().map(|r| r.shape.clone()),
        Some(vec![1, 1000, 1, 1])
    );

    let kinds: Vec<i32> = config.instance_group.iter().map(|g| g.kind).collect();
    assert_eq!(
        kinds,
        [
            model_instance_group::Kind::Gpu as i32,
            model_instance_group::Kind::Cpu as i32
        ]
    );
    assert_eq!(config.instance_group[0].count, 2);
    assert_eq!(config.instance_group[0].gpus, [0, 1]);

    let Some(SchedulingChoice::DynamicBatching(batching)) = config.scheduling_choice else {
        panic!("dynamic batching expected");
    };
    assert_eq!(batching.preferred_batch_size, [4, 8]);
    assert_eq!(batching.max_queue_delay_microseconds, 100);
    assert_eq!(batching.priority_levels, 2);
    assert_eq!(batching.default_priority_level, 1);
    let default_policy = batching.default_queue_policy.unwrap_or_default();
    assert_eq!(
        default_policy.timeout_action,
        model_queue_policy::TimeoutAction::Delay as i32
    );
    assert_eq!(default_policy.default_timeout_microseconds, 5000);
    assert_eq!(batching.priority_queue_policy.len(), 2);
    assert_eq!(batching.priority_queue_policy[&1].max_queue_size, 16);
    assert!(batching.priority_queue_policy[&1].allow_timeout_override);
    assert_eq!(batching.priority_queue_policy[&2].timeout_action, 0);

    assert_eq!(
        config.parameters.get("EXECUTION_ENV_PATH"),
        Some(&ModelParameter {
            string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz".to_owned()
        })
    );
    assert_eq!(config.parameters["threads"].string_value, "4");

    let [warmup] = config.model_warmup.as_slice() else {
        panic!("one warmup expected");
    };
    assert_eq!(warmup.batch_size, 8);
    let warm_input = &warmup.inputs["data_0"];
    assert_eq!(warm_input.dims, [3, 224, 224]);
    assert_eq!(
        warm_input.input_data_type,
        Some(model_warmup::input::InputDataType::ZeroData(true))
    );

    let accelerators = config
        .optimization
        .and_then(|o| o.execution_accelerators)
        .unwrap_or_default();
    let [tensorrt] = accelerators.gpu_execution_accelerator.as_slice() else {
        panic!("one accelerator expected");
    };
    assert_eq!(tensorrt.name, "tensorrt");
    assert_eq!(tensorrt.parameters["precision_mode"], "FP16");
}

#[test]
fn image_model_source_map_points_at_field_names() {
    let (_, map) = parse_ok(IMAGE_MODEL);
    assert_eq!(map.get("max_batch_size"), Some(at(5, 1)));
    assert_eq!(map.get("version_policy.specific.versions"), Some(at(6, 31)));
    assert_eq!(map.get("input"), Some(at(7, 1)));
    assert_eq!(map.get("input[0]"), Some(at(8, 3)));
    assert_eq!(map.get("input[0].dims"), Some(at(12, 5)));
    assert_eq!(map.get("input[0].reshape.shape"), Some(at(13, 16)));
    assert_eq!(map.get("instance_group[1].kind"), Some(at(27, 14)));
    assert_eq!(
        map.get("dynamic_batching.max_queue_delay_microseconds"),
        Some(at(31, 3))
    );
    assert_eq!(
        map.get("dynamic_batching.priority_queue_policy[1]"),
        Some(at(35, 3))
    );
    assert_eq!(
        map.get("dynamic_batching.priority_queue_policy[1].max_queue_size"),
        Some(at(37, 14))
    );
    assert_eq!(
        map.get("dynamic_batching.priority_queue_policy[2]"),
        Some(at(39, 27))
    );
    assert_eq!(
        map.get("parameters[\"EXECUTION_ENV_PATH\"]"),
        Some(at(41, 1))
    );
    assert_eq!(
        map.get("parameters[\"EXECUTION_ENV_PATH\"].string_value"),
        Some(at(41, 49))
    );
    assert_eq!(
        map.get("model_warmup[0].inputs[\"data_0\"].zero_data"),
        Some(at(49, 59))
    );
    assert_eq!(
        map.nearest("model_warmup[0].inputs[\"data_0\"].random_data"),
        Some(at(47, 5))
    );
    assert_eq!(map.nearest("output[0].dims[0]"), Some(at(20, 5)));
}

const SEQUENCE_MODEL: &str = r#"
name: "sequence"
backend: "python"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2, 4 ] }
  control_input [
    {
      name: "START"
      control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ]
    },
    {
      name: "READY"
      control [ { kind: CONTROL_SEQUENCE_READY fp32_false_true: [ 0, 1.0 ] } ]
    },
    {
      name: "CORRID"
      control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 }
    }
  ]
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_FP32 dims: [ -1 ]
            initial_state { name: "zeros" data_type: TYPE_FP32 dims: [ 1 ] zero_data: true } } ]
}
instance_group [ { kind: KIND_CPU count: 1 } ]
"#;

#[test]
fn sequence_model_transcodes_to_model_config() {
    let config = config(SEQUENCE_MODEL);
    assert_eq!(config.backend, "python");
    let Some(SchedulingChoice::SequenceBatching(sequence)) = config.scheduling_choice else {
        panic!("sequence batching expected");
    };
    assert_eq!(sequence.max_sequence_idle_microseconds, 5_000_000);
    let Some(model_sequence_batching::StrategyChoice::Oldest(oldest)) = sequence.strategy_choice
    else {
        panic!("oldest strategy expected");
    };
    assert_eq!(oldest.max_candidate_sequences, 4);
    assert_eq!(oldest.preferred_batch_size, [2, 4]);

    let names: Vec<&str> = sequence
        .control_input
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["START", "READY", "CORRID"]);
    assert_eq!(
        sequence.control_input[0].control[0].int32_false_true,
        [0, 1]
    );
    assert_eq!(
        sequence.control_input[1].control[0].fp32_false_true,
        [0.0, 1.0]
    );
    let corrid = &sequence.control_input[2].control[0];
    assert_eq!(
        corrid.kind,
        model_sequence_batching::control::Kind::ControlSequenceCorrid as i32
    );
    assert_eq!(corrid.data_type, DataType::TypeUint64 as i32);

    let [state] = sequence.state.as_slice() else {
        panic!("one state expected");
    };
    assert_eq!(state.dims, [-1]);
    assert_eq!(state.initial_state[0].name, "zeros");
}

const ENSEMBLE_MODEL: &str = r#"
name: "ensemble"
platform: "ensemble"
max_batch_size: 1
input [ { name: "RAW" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "SCORES" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "preprocess"
      model_version: -1
      input_map { key: "INPUT0" value: "RAW" }
      output_map { key: "OUTPUT0" value: "preprocessed_image" }
    },
    {
      model_name: "classifier"
      model_version: -1
      input_map [ { key: "INPUT0", value: "preprocessed_image" } ]
      output_map { key: "OUTPUT0" value: "SCORES" }
    }
  ]
}
"#;

#[test]
fn ensemble_model_transcodes_to_model_config() {
    let config = config(ENSEMBLE_MODEL);
    let Some(SchedulingChoice::EnsembleScheduling(ensemble)) = config.scheduling_choice else {
        panic!("ensemble scheduling expected");
    };
    let [first, second] = ensemble.step.as_slice() else {
        panic!("two steps expected");
    };
    assert_eq!(first.model_name, "preprocess");
    assert_eq!(first.model_version, -1);
    assert_eq!(first.input_map["INPUT0"], "RAW");
    assert_eq!(first.output_map["OUTPUT0"], "preprocessed_image");
    assert_eq!(second.input_map["INPUT0"], "preprocessed_image");
    assert_eq!(second.output_map["OUTPUT0"], "SCORES");

    let (_, map) = parse_ok(ENSEMBLE_MODEL);
    assert_eq!(
        map.get("ensemble_scheduling.step[0].input_map[\"INPUT0\"]"),
        Some(at(12, 7))
    );
    assert_eq!(
        map.get("ensemble_scheduling.step[1].input_map[\"INPUT0\"]"),
        Some(at(18, 19))
    );
    assert_eq!(
        map.get("ensemble_scheduling.step[1].model_name"),
        Some(at(16, 7))
    );
}

#[test]
fn empty_documents_are_all_defaults() {
    for text in ["", "   \n\t\n", "# only a comment\n# and another"] {
        assert_eq!(
            config(text),
            oxiserve_proto::ModelConfig::default(),
            "{text:?}"
        );
    }
}
