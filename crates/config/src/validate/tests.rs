//! Each validation rule, on configurations parsed from text so that the
//! reported line:column is checked too.

use std::path::Path;

use crate::{ModelFolder, complete_config, parse_config};

/// `line:column: field: message` of every problem in `text`, for a Python
/// model folder named "m".
fn problems(text: &str) -> Vec<String> {
    problems_with_gpus(text, &[])
}

fn problems_with_gpus(text: &str, gpus: &[i32]) -> Vec<String> {
    let file = Path::new("config.pbtxt");
    let parsed = parse_config(text, file).unwrap_or_else(|e| panic!("parse: {e}"));
    let folder = ModelFolder {
        name: "m".into(),
        first_version: Some([("model.py".to_string(), false)].into()),
        gpus: gpus.to_vec(),
    };
    match complete_config(parsed.config, &folder) {
        Ok(_) => vec![],
        Err(errors) => errors
            .into_iter()
            .map(|e| {
                let e = e.locate(file, Some(&parsed.source_map));
                let at = e
                    .position
                    .map(|p| format!("{}:{}", p.line, p.column))
                    .unwrap_or_default();
                format!("{at}: {}: {}", e.field, e.message)
            })
            .collect(),
    }
}

fn assert_one(text: &str, expected_start: &str) {
    let got = problems(text);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].starts_with(expected_start),
        "got {:?}, want prefix {expected_start:?}",
        got[0]
    );
}

#[test]
fn valid_config_has_no_problems() {
    let text = r#"
backend: "python"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 3, -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] reshape { shape: [ -1 ] } } ]
dynamic_batching { preferred_batch_size: [ 4, 8 ] }
"#;
    assert_eq!(problems(text), Vec::<String>::new());
}

#[test]
fn name_must_match_folder() {
    assert_one(
        "name: \"other\"\nbackend: \"python\"",
        "1:1: name: name \"other\" differs from the model's folder name 'm'",
    );
}

#[test]
fn platform_typo_is_suggested() {
    let got = problems("platform: \"onnxruntime_onx\"");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(
            "1:1: platform: unknown platform \"onnxruntime_onx\"; did you mean 'onnxruntime_onnx'?"
        ),
        "{got:?}"
    );
}

#[test]
fn platform_and_backend_must_agree() {
    assert_one(
        "backend: \"onnxruntime\"\nplatform: \"pytorch_libtorch\"",
        "2:1: platform: platform \"pytorch_libtorch\" does not go with backend \"onnxruntime\" (expected \"onnxruntime_onnx\")",
    );
}

#[test]
fn negative_max_batch_size() {
    assert_one(
        "backend: \"python\"\nmax_batch_size: -2",
        "2:1: max_batch_size: must be 0 (no batching) or positive, got -2",
    );
}

#[test]
fn bad_dims_and_missing_fields() {
    let text = "backend: \"python\"\ninput [\n  { name: \"A\" data_type: TYPE_FP32 dims: [ 0 ] },\n  { name: \"B\" dims: [ 1 ] }\n]\noutput { name: \"C\" data_type: TYPE_FP32 }";
    let got = problems(text);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(
        got[0].starts_with("3:36: input[0].dims: 'A' has dimension 0"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("4:3: input[1]: 'B' must specify 'data_type'"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("6:1: output[0]: 'C' must specify 'dims'"),
        "{got:?}"
    );
}

#[test]
fn duplicate_tensor_names() {
    let text = "backend: \"python\"\ninput [ { name: \"A\" data_type: TYPE_FP32 dims: 1 }, { name: \"A\" data_type: TYPE_FP32 dims: 1 } ]";
    assert_one(text, "2:55: input[1].name: input name 'A' is used twice");
}

#[test]
fn reshape_must_keep_element_count() {
    let text = "backend: \"python\"\noutput { name: \"O\" data_type: TYPE_FP32 dims: [ 16 ] reshape { shape: [ 1, 15 ] } }";
    assert_one(
        text,
        "2:54: output[0].reshape: 'O' has dims [16] and reshape [1, 15] of different sizes",
    );
    let text = "backend: \"python\"\ninput { name: \"I\" data_type: TYPE_FP32 dims: [ 1 ] reshape { shape: [ ] } }";
    assert_one(
        text,
        "2:52: input[0].reshape: 'I' cannot have an empty reshape in a non-batching model",
    );
}

#[test]
fn nchw_needs_three_dims() {
    let text = "backend: \"python\"\ninput { name: \"I\" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 4 ] }";
    assert_one(
        text,
        "2:40: input[0].format: FORMAT_NCHW requires exactly 3 dims, got 2",
    );
}

#[test]
fn shape_tensors_only_for_tensorrt() {
    let text = "backend: \"python\"\ninput { name: \"I\" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true }";
    assert_one(
        text,
        "2:53: input[0].is_shape_tensor: shape tensors are only supported for the TensorRT platform",
    );
}

#[test]
fn preferred_batch_sizes() {
    let text = "backend: \"python\"\nmax_batch_size: 4\ndynamic_batching {\n  preferred_batch_size: [ 2, 8 ]\n}";
    assert_one(
        text,
        "4:3: dynamic_batching.preferred_batch_size: preferred batch size 8 is larger than max_batch_size 4",
    );
}

#[test]
fn priority_levels() {
    let text = "backend: \"python\"\nmax_batch_size: 4\ndynamic_batching {\n  priority_levels: 2\n  default_priority_level: 3\n  priority_queue_policy { key: 5 value { max_queue_size: 1 } }\n}";
    let got = problems(text);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].starts_with("5:3: dynamic_batching.default_priority_level: must be in [1, 2]"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with(
            "6:3: dynamic_batching.priority_queue_policy: priority level 5 is outside [1, 2]"
        ),
        "{got:?}"
    );
}

#[test]
fn preserve_ordering_forbids_delay() {
    let text = "backend: \"python\"\nmax_batch_size: 4\ndynamic_batching {\n  preserve_ordering: true\n  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 10 }\n}";
    assert_one(
        text,
        "4:3: dynamic_batching.preserve_ordering: a queue policy cannot use timeout_action DELAY",
    );
}

#[test]
fn batch_padding_parameters_of_a_dynamic_batcher() {
    let batcher = "backend: \"python\"\nmax_batch_size: 4\ndynamic_batching { }\n";
    let param = |k: &str, v: &str| {
        format!("parameters {{ key: \"{k}\" value: {{ string_value: \"{v}\" }} }}\n")
    };
    let got = problems(&format!("{batcher}{}", param("batch_padding", "bucket")));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        got[0].ends_with("parameters.batch_padding: parameter 'batch_padding' must be 'longest', 'buckets' or 'none', got 'bucket'"),
        "{got:#?}"
    );
    let bad_cost = format!(
        "{batcher}{}{}",
        param("batch_padding", "buckets"),
        param("batch_bucket_cost", "lots")
    );
    let got = problems(&bad_cost);
    assert!(
        got.len() == 1
            && got[0].contains(
                "parameters.batch_bucket_cost: parameter 'batch_bucket_cost' must be a whole number"
            ),
        "{got:#?}"
    );
    assert!(problems(&format!("{batcher}{}", param("batch_padding", "buckets"))).is_empty());
    // Without a dynamic batcher nothing reads them.
    let unbatched =
        "backend: \"python\"\nmax_batch_size: 4\n".to_string() + &param("batch_padding", "bucket");
    assert!(problems(&unbatched).is_empty());
}

#[test]
fn sequence_controls() {
    let text = r#"backend: "python"
max_batch_size: 2
sequence_batching {
  control_input [
    { name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1, 2 ] } ] },
    { name: "E" control [ { kind: CONTROL_SEQUENCE_END } ] },
    { name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] },
    { name: "S2" control [ { kind: CONTROL_SEQUENCE_START bool_false_true: [ false, true ] } ] }
  ]
}"#;
    let got = problems(text);
    assert_eq!(got.len(), 4, "{got:#?}");
    assert!(got[0].starts_with("5:58: sequence_batching.control_input[0].control[0].int32_false_true: must have exactly 2 entries"), "{got:?}");
    assert!(
        got[1].starts_with(
            "6:27: sequence_batching.control_input[1].control[0]: CONTROL_SEQUENCE_END must give"
        ),
        "{got:?}"
    );
    assert!(got[2].starts_with("7:59: sequence_batching.control_input[2].control[0].data_type: CONTROL_SEQUENCE_CORRID data_type must be"), "{got:?}");
    assert!(got[3].starts_with("8:30: sequence_batching.control_input[3].control[0].kind: CONTROL_SEQUENCE_START is already given by control input 'S'"), "{got:?}");
}

#[test]
fn gpu_groups_fail_without_gpus() {
    let text = "backend: \"python\"\ninstance_group [ { count: 1 kind: KIND_GPU gpus: [ 0 ] } ]";
    assert_one(
        text,
        "2:44: instance_group[0].gpus: instance group 'm_0' asks for GPU 0, which is not available",
    );
    let text = "backend: \"python\"\ninstance_group [ { kind: KIND_GPU } ]";
    assert_one(
        text,
        "2:20: instance_group[0].kind: instance group 'm_0' has kind KIND_GPU but no GPU is available",
    );
    assert_eq!(problems_with_gpus(text, &[0]), Vec::<String>::new());
}

#[test]
fn cpu_groups_must_not_list_gpus() {
    let text = "backend: \"python\"\ninstance_group [ { kind: KIND_CPU gpus: [ 1 ] } ]";
    assert_one(
        text,
        "2:35: instance_group[0].gpus: instance group 'm_0' has kind KIND_CPU but lists GPUs [1]",
    );
}

#[test]
fn version_policy_values() {
    assert_one(
        "backend: \"python\"\nversion_policy: { latest { num_versions: 0 } }",
        "2:28: version_policy.latest.num_versions: must be at least 1",
    );
    assert_one(
        "backend: \"python\"\nversion_policy: { specific { versions: [ -1 ] } }",
        "2:30: version_policy.specific.versions: version -1 is negative",
    );
}

#[test]
fn decoupled_models_cannot_cache() {
    let text = "backend: \"python\"\nmodel_transaction_policy { decoupled: true }\nresponse_cache { enable: true }";
    assert_one(
        text,
        "3:18: response_cache.enable: the response cache does not support decoupled models",
    );
}

#[test]
fn batch_inputs() {
    let text = "backend: \"python\"\nmax_batch_size: 2\ninput { name: \"I\" data_type: TYPE_FP32 dims: [ -1 ] }\nbatch_input [ { kind: BATCH_ELEMENT_COUNT target_name: \"N\" data_type: TYPE_INT64 source_input: \"X\" } ]";
    let got = problems(text);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(
        got[0].starts_with("4:82: batch_input[0].source_input: unknown source input 'X'"),
        "{got:?}"
    );
    assert!(got[1].starts_with("4:60: batch_input[0].data_type: batch input (BATCH_ELEMENT_COUNT) data type must be TYPE_INT32 or TYPE_FP32"), "{got:?}");
}
