//! Properties of the configuration decoders on arbitrary input: the
//! `config.pbtxt` text format and the JSON form never panic, and a
//! configuration written as text or JSON reads back as itself.

use std::path::Path;

use oxiserve_config::{
    ModelConfig, ModelFolder, complete_config, from_json, parse_config, to_json,
};
use oxiserve_proto::inference::{DataType, ModelInput, ModelOutput};
use proptest::prelude::*;

/// Text made of the words, numbers and punctuation of `config.pbtxt`, so
/// that arbitrary input reaches past the first syntax error.
fn pbtxt_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        prop::sample::select(vec![
            "name",
            "input",
            "output",
            "dims",
            "data_type",
            "max_batch_size",
            "reshape",
            "shape",
            "instance_group",
            "count",
            "kind",
            "KIND_CPU",
            "TYPE_FP32",
            "TYPE_STRING",
            "dynamic_batching",
            "parameters",
            "key",
            "value",
            "string_value",
            "version_policy",
            "specific",
            "versions",
            "optional",
            "true",
            ":",
            "{",
            "}",
            "[",
            "]",
            "<",
            ">",
            ",",
            ";",
            "#",
            "\n",
            "-",
            "\"",
        ])
        .prop_map(str::to_string),
        "-?[0-9]{1,20}(\\.[0-9]+)?(e-?[0-9]+)?",
        "\"([a-zA-Z0-9_ ]|\\\\[0-7nrt\"x\\\\]){0,8}\"",
    ];
    prop::collection::vec(token, 0..48).prop_map(|tokens| tokens.join(" "))
}

fn tensor_name() -> impl Strategy<Value = String> {
    "[A-Z][A-Z0-9_]{0,7}"
}

fn data_type() -> impl Strategy<Value = i32> {
    (DataType::TypeBool as i32..=DataType::TypeBf16 as i32)
        .prop_filter("not TYPE_STRING's gap", |&t| DataType::try_from(t).is_ok())
}

fn dims() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop_oneof![Just(-1i64), 1i64..64], 1..4)
}

/// A configuration with the fields most configurations write.
fn model_config() -> impl Strategy<Value = ModelConfig> {
    let input =
        (tensor_name(), data_type(), dims()).prop_map(|(name, data_type, dims)| ModelInput {
            name,
            data_type,
            dims,
            ..ModelInput::default()
        });
    let output =
        (tensor_name(), data_type(), dims()).prop_map(|(name, data_type, dims)| ModelOutput {
            name,
            data_type,
            dims,
            ..ModelOutput::default()
        });
    (
        "[a-z][a-z0-9_]{0,11}",
        prop::sample::select(vec!["python", "onnxruntime", "identity"]),
        0i32..64,
        prop::collection::vec(input, 0..4),
        prop::collection::vec(output, 0..3),
    )
        .prop_map(
            |(name, backend, max_batch_size, input, output)| ModelConfig {
                name,
                backend: backend.to_string(),
                max_batch_size,
                input,
                output,
                ..ModelConfig::default()
            },
        )
}

/// `config` in protobuf text format, as a person writes it.
fn pbtxt(config: &ModelConfig) -> String {
    let tensor = |name: &str, data_type: i32, dims: &[i64]| {
        let data_type = DataType::try_from(data_type).unwrap().as_str_name();
        let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
        format!(
            "  {{ name: \"{name}\", data_type: {data_type}, dims: [ {} ] }}",
            dims.join(", ")
        )
    };
    let inputs: Vec<String> = config
        .input
        .iter()
        .map(|i| tensor(&i.name, i.data_type, &i.dims))
        .collect();
    let outputs: Vec<String> = config
        .output
        .iter()
        .map(|o| tensor(&o.name, o.data_type, &o.dims))
        .collect();
    format!(
        "name: \"{}\"\nbackend: \"{}\"\nmax_batch_size: {}\ninput [\n{}\n]\noutput [\n{}\n]\n",
        config.name,
        config.backend,
        config.max_batch_size,
        inputs.join(",\n"),
        outputs.join(",\n")
    )
}

fn file() -> &'static Path {
    Path::new("config.pbtxt")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_text_parses_or_is_refused(text in prop_oneof![any::<String>(), pbtxt_soup()]) {
        if let Ok(parsed) = parse_config(&text, file()) {
            let folder = ModelFolder { name: parsed.config.name.clone(), ..ModelFolder::default() };
            let _ = complete_config(parsed.config, &folder);
        }
    }

    #[test]
    fn errors_point_into_the_text(text in pbtxt_soup()) {
        if let Err(err) = parse_config(&text, file()) {
            let position = err.position.expect("a text format error has a position");
            let lines = text.matches('\n').count() + 1;
            prop_assert!(position.line >= 1 && position.line as usize <= lines, "{err}");
            prop_assert!(position.column >= 1, "{err}");
        }
    }

    #[test]
    fn written_text_reads_back(config in model_config()) {
        let text = pbtxt(&config);
        let parsed = parse_config(&text, file()).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.config, config);
    }

    #[test]
    fn any_json_is_read_or_refused(text in prop_oneof![
        any::<String>(),
        "\\{(\"[a-z_]{1,12}\": ?(-?[0-9]{1,20}|\"[A-Z_0-9]{0,10}\"|\\[\\]|\\{\\}|true|null),? ?){0,6}\\}",
    ]) {
        let _ = from_json(&text);
    }

    #[test]
    fn json_reads_back(config in model_config()) {
        let json = to_json(&config).to_string();
        prop_assert_eq!(from_json(&json), Ok(config));
    }
}
