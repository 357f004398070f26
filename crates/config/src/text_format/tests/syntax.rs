//! Every piece of syntax Triton's configs use, accepted with the right values.

use oxiserve_proto::ModelConfig;
use oxiserve_proto::inference::model_config::SchedulingChoice;
use oxiserve_proto::inference::model_sequence_batching::Control;
use oxiserve_proto::inference::{ModelDynamicBatching, ModelInput};

use super::{at, config, parse_ok};

fn dynamic_batching(config: ModelConfig) -> ModelDynamicBatching {
    match config.scheduling_choice {
        Some(SchedulingChoice::DynamicBatching(batching)) => batching,
        other => panic!("dynamic batching expected, got {other:?}"),
    }
}

/// The first control of the first control input of `sequence_batching { control_input { control { <body> } } }`.
fn control(body: &str) -> Control {
    let text = format!("sequence_batching {{ control_input {{ control {{ {body} }} }} }}");
    match config(&text).scheduling_choice {
        Some(SchedulingChoice::SequenceBatching(mut sequence)) => {
            sequence.control_input.remove(0).control.remove(0)
        }
        other => panic!("sequence batching expected, got {other:?}"),
    }
}

fn input_dims(config: &ModelConfig) -> Vec<Vec<i64>> {
    config
        .input
        .iter()
        .map(|input| input.dims.clone())
        .collect()
}

#[test]
fn comments_anywhere_whitespace_is_allowed() {
    let config = config(
        "# header\nmax_batch_size # before colon\n: # after colon\n 8 # trailing\n\
         input # name\n [ # open\n { # brace\n name: \"a\" # field\n } # close\n ] # end",
    );
    assert_eq!(config.max_batch_size, 8);
    assert_eq!(config.input[0].name, "a");
}

#[test]
fn separators_are_optional_whitespace_commas_or_semicolons() {
    let config = config(
        "name: \"m\", max_batch_size: 4; platform: \"p\"\n\
         input { name: \"a\"; dims: 1, dims: 2 } input { name: \"b\" dims: 3 }",
    );
    assert_eq!((config.name.as_str(), config.max_batch_size), ("m", 4));
    assert_eq!(config.platform, "p");
    assert_eq!(input_dims(&config), [vec![1, 2], vec![3]]);
}

#[test]
fn message_fields_with_or_without_colon_and_either_delimiter() {
    for text in [
        "dynamic_batching { max_queue_delay_microseconds: 7 }",
        "dynamic_batching: { max_queue_delay_microseconds: 7 }",
        "dynamic_batching < max_queue_delay_microseconds: 7 >",
        "dynamic_batching: <max_queue_delay_microseconds:7>",
    ] {
        let batching = dynamic_batching(config(text));
        assert_eq!(batching.max_queue_delay_microseconds, 7, "{text}");
    }
    assert_eq!(
        dynamic_batching(config("dynamic_batching {}")),
        ModelDynamicBatching::default()
    );
}

#[test]
fn repeated_scalars_append_in_every_form() {
    let dims = |text: &str| input_dims(&config(&format!("input {{ {text} }}"))).remove(0);
    assert_eq!(dims("dims: 3 dims: 4"), [3, 4]);
    assert_eq!(dims("dims: [ 3, -1 ]"), [3, -1]);
    assert_eq!(dims("dims: [3] dims: 4 dims: [5, 6]"), [3, 4, 5, 6]);
    assert_eq!(dims("dims: []"), Vec::<i64>::new());
    assert_eq!(dims("dims: [\n  1, # one\n  2\n]"), [1, 2]);
}

#[test]
fn repeated_messages_in_every_form() {
    let names = |text: &str| -> Vec<String> {
        config(text)
            .input
            .into_iter()
            .map(|input: ModelInput| input.name)
            .collect()
    };
    let two = ["a", "b"];
    assert_eq!(names("input { name: \"a\" } input { name: \"b\" }"), two);
    assert_eq!(names("input [ { name: \"a\" }, { name: \"b\" } ]"), two);
    assert_eq!(names("input: [ { name: \"a\" }, < name: \"b\" > ]"), two);
    assert_eq!(
        names("input [ { name: \"a\" } ] input { name: \"b\" }"),
        two
    );
    assert_eq!(names("input [ ]"), Vec::<String>::new());
    assert_eq!(names("input: []"), Vec::<String>::new());
}

#[test]
fn map_entries_in_every_form() {
    let config = config(
        r#"
        parameters { key: "a" value: { string_value: "1" } }
        parameters { key: "b" value { string_value: "2" } }
        parameters [ { key: "c" value { string_value: "3" } }, { value { string_value: "4" } key: "d" } ]
        parameters: [ { key: "e" } ]
        metric_tags { key: "team" value: "vision" }
        metric_tags: { key: "tier", value: 'gold' }
        "#,
    );
    let mut values: Vec<(&str, &str)> = config
        .parameters
        .iter()
        .map(|(key, value)| (key.as_str(), value.string_value.as_str()))
        .collect();
    values.sort();
    assert_eq!(
        values,
        [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "")]
    );
    assert_eq!(config.metric_tags["team"], "vision");
    assert_eq!(config.metric_tags["tier"], "gold");
}

#[test]
fn repeated_map_key_last_entry_wins() {
    let text = "parameters { key: \"k\" value { string_value: \"old\" } }\n\
                parameters { key: \"k\" value { string_value: \"new\" } }";
    let (message, map) = parse_ok(text);
    let config: ModelConfig = message.transcode_to().expect("transcodes");
    assert_eq!(config.parameters.len(), 1);
    assert_eq!(config.parameters["k"].string_value, "new");
    assert_eq!(map.get("parameters"), Some(at(1, 1)));
    assert_eq!(map.get("parameters[\"k\"]"), Some(at(2, 1)));
    assert_eq!(map.get("parameters[\"k\"].string_value"), Some(at(2, 31)));
}

#[test]
fn integer_keyed_maps() {
    let batching = dynamic_batching(config(
        "dynamic_batching { priority_queue_policy { key: 0x10 value { max_queue_size: 3 } } }",
    ));
    assert_eq!(batching.priority_queue_policy[&16].max_queue_size, 3);
}

#[test]
fn enums_by_name_or_by_any_number() {
    let data_type =
        |value: &str| config(&format!("input {{ data_type: {value} }}")).input[0].data_type;
    assert_eq!(data_type("TYPE_FP32"), 11);
    assert_eq!(data_type("11"), 11);
    assert_eq!(data_type("0x3"), 3);
    assert_eq!(data_type("99"), 99);
    assert_eq!(data_type("-1"), -1);
}

#[test]
fn strings_with_quotes_escapes_concatenation_and_utf8() {
    let name = |value: &str| config(&format!("name: {value}")).name;
    assert_eq!(name("\"double\""), "double");
    assert_eq!(name("'single'"), "single");
    assert_eq!(
        name(r#""tab\there\nnew \"q\" \'s\' \\ \x41\101\u00e9""#),
        "tab\there\nnew \"q\" 's' \\ AAé"
    );
    assert_eq!(name("\"a\" 'b'\n  \"c\""), "abc");
    assert_eq!(name("\"한국어 모델\""), "한국어 모델");
    assert_eq!(name("\"\""), "");
}

#[test]
fn integers_in_every_base_and_sign() {
    assert_eq!(config("max_batch_size: 0x10").max_batch_size, 16);
    assert_eq!(config("max_batch_size: 010").max_batch_size, 8);
    assert_eq!(
        config("max_batch_size: -2147483648").max_batch_size,
        i32::MIN
    );
    assert_eq!(
        config("max_batch_size: 2147483647").max_batch_size,
        i32::MAX
    );
    let batching = dynamic_batching(config(
        "dynamic_batching { priority_levels: 18446744073709551615 }",
    ));
    assert_eq!(batching.priority_levels, u64::MAX);
    let step = |text: &str| match config(&format!("ensemble_scheduling {{ step {{ {text} }} }}"))
        .scheduling_choice
    {
        Some(SchedulingChoice::EnsembleScheduling(mut ensemble)) => ensemble.step.remove(0),
        other => panic!("ensemble expected, got {other:?}"),
    };
    assert_eq!(step("model_version: -1").model_version, -1);
    assert_eq!(
        step("model_version: -9223372036854775808").model_version,
        i64::MIN
    );
}

#[test]
fn floats_in_every_spelling() {
    let values = control(
        "fp32_false_true: [1, 1.5, -2.5e-3, .5, 1.0f, 2F, 3., 0x10, 1e40, inf, -inf, infinity, INF, -Infinity]",
    )
    .fp32_false_true;
    assert_eq!(
        values,
        [
            1.0,
            1.5,
            -2.5e-3,
            0.5,
            1.0,
            2.0,
            3.0,
            16.0,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY
        ]
    );
    let nans = control("fp32_false_true: [nan, NaN, -nan]").fp32_false_true;
    assert!(nans.iter().all(|v| v.is_nan()), "{nans:?}");

    let text =
        "model_metrics { metric_control { histogram_options { buckets: [0.1, 1e300, -5] } } }";
    let metrics = config(text).model_metrics.unwrap_or_default();
    let options = metrics.metric_control[0].metric_options.clone();
    assert_eq!(
        format!("{options:?}"),
        "Some(HistogramOptions(HistogramOptions { buckets: [0.1, 1e300, -5.0] }))"
    );
}

#[test]
fn bools_in_every_spelling() {
    let values = control("bool_false_true: [true, false, True, False, t, f, 1, 0]").bool_false_true;
    assert_eq!(values, [true, false, true, false, true, false, true, false]);
}

#[test]
fn members_of_different_oneofs_and_messages_do_not_conflict() {
    let config = config(
        "version_policy { latest { num_versions: 2 } }\n\
         model_warmup { inputs { key: \"a\" value { zero_data: true } } inputs { key: \"b\" value { random_data: true } } }\n\
         sequence_batching { direct { } }",
    );
    assert_eq!(config.model_warmup[0].inputs.len(), 2);
    assert!(matches!(
        config.scheduling_choice,
        Some(SchedulingChoice::SequenceBatching(_))
    ));
}

#[test]
fn byte_order_mark_is_skipped() {
    let (message, map) = parse_ok("\u{feff}max_batch_size: 2");
    assert_eq!(
        message
            .transcode_to::<ModelConfig>()
            .map(|c| c.max_batch_size),
        Ok(2)
    );
    assert_eq!(map.get("max_batch_size"), Some(at(1, 1)));
}
