//! Every error class, with its exact position and message.

use super::{at, parse_err};

/// Asserts that parsing `text` fails at `line:column` with exactly `message`.
#[track_caller]
fn assert_error(text: &str, line: u32, column: u32, message: &str) {
    let err = parse_err(text);
    assert_eq!(
        (err.position, err.message.as_str()),
        (at(line, column), message),
        "parsing {text:?}"
    );
}

#[test]
fn error_displays_line_column_and_message() {
    let err = parse_err("\n  max_batch_sise: 8");
    assert_eq!(
        err.to_string(),
        "2:3: unknown field 'max_batch_sise' in inference.ModelConfig; did you mean 'max_batch_size'?"
    );
}

#[test]
fn unknown_fields_suggest_the_closest_name() {
    assert_error(
        "ensemble_scheduling {\n  step {\n    imput_map { key: \"a\" value: \"b\" }\n  }\n}",
        3,
        5,
        "unknown field 'imput_map' in inference.ModelEnsembling.Step; did you mean 'input_map'?",
    );
    assert_error(
        "parameters { key: \"a\" vlaue { string_value: \"b\" } }",
        1,
        23,
        "unknown field 'vlaue' in inference.ModelConfig.ParametersEntry; did you mean 'value'?",
    );
    assert_error(
        "input { reshape { dims: [1] } }",
        1,
        19,
        "unknown field 'dims' in inference.ModelTensorReshape; valid fields: shape",
    );
    assert_error(
        "bananas: 1",
        1,
        1,
        "unknown field 'bananas' in inference.ModelConfig",
    );
}

#[test]
fn positions_count_chars_after_utf8_text_and_comments() {
    assert_error(
        "name: \"모델\" bogus: 1",
        1,
        12,
        "unknown field 'bogus' in inference.ModelConfig",
    );
    assert_error(
        "# 주석: 한국어 comment { [ \"\n  max_batch: 1",
        2,
        3,
        "unknown field 'max_batch' in inference.ModelConfig; did you mean 'max_batch_size'?",
    );
    assert_error(
        "name: \"é\" # ünïcödé\n\tplatform: \"x\" @",
        2,
        16,
        "unexpected character '@'",
    );
}

#[test]
fn unknown_enum_values_suggest_or_list() {
    assert_error(
        "input { data_type: TYPE_FP23 }",
        1,
        20,
        "unknown value 'TYPE_FP23' for field 'data_type' (enum inference.DataType); did you mean 'TYPE_FP32'?",
    );
    assert_error(
        "instance_group [ { kind: GPU } ]",
        1,
        26,
        "unknown value 'GPU' for field 'kind' (enum inference.ModelInstanceGroup.Kind); \
         valid values: KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL",
    );
}

#[test]
fn wrong_kind_of_value_names_what_the_field_expects() {
    assert_error(
        "max_batch_size: \"eight\"",
        1,
        17,
        "field 'max_batch_size' expects an integer (int32), found \"eight\"",
    );
    assert_error(
        "max_batch_size { }",
        1,
        16,
        "field 'max_batch_size' expects an integer (int32), found '{'",
    );
    assert_error(
        "max_batch_size: 1.5",
        1,
        17,
        "field 'max_batch_size' expects an integer (int32), found 1.5",
    );
    assert_error(
        "max_batch_size: -x",
        1,
        18,
        "field 'max_batch_size' expects an integer (int32), found x",
    );
    assert_error("name: 5", 1, 7, "field 'name' expects a string, found 5");
    assert_error(
        "input { data_type: \"TYPE_FP32\" }",
        1,
        20,
        "field 'data_type' expects an enum value (inference.DataType), found \"TYPE_FP32\"; \
         write enum values without quotes",
    );
    assert_error(
        "input { data_type: { } }",
        1,
        20,
        "field 'data_type' expects an enum value (inference.DataType), found '{'",
    );
    assert_error(
        "dynamic_batching: 5",
        1,
        19,
        "field 'dynamic_batching' expects a message (inference.ModelDynamicBatching), found 5",
    );
    assert_error(
        "input [ name: \"a\" ]",
        1,
        9,
        "field 'input' expects a message (inference.ModelInput), found name",
    );
    assert_error(
        "response_cache { enable: yes }",
        1,
        26,
        "field 'enable' expects a bool (true or false), found yes",
    );
    assert_error(
        "sequence_batching { control_input { control { fp32_false_true: [1, \"2\"] } } }",
        1,
        68,
        "field 'fp32_false_true' expects a number (float), found \"2\"",
    );
    assert_error(
        "max_batch_size:",
        1,
        16,
        "field 'max_batch_size' expects an integer (int32), found end of input",
    );
    assert_error(
        "name: \"\\xff\"",
        1,
        7,
        "field 'name' is a string, but the literal is not valid UTF-8",
    );
}

#[test]
fn integers_out_of_range_name_the_field_and_type() {
    assert_error(
        "max_batch_size: 2147483648",
        1,
        17,
        "value 2147483648 is out of range for field 'max_batch_size' (int32)",
    );
    assert_error(
        "max_batch_size: -0x80000001",
        1,
        17,
        "value -0x80000001 is out of range for field 'max_batch_size' (int32)",
    );
    assert_error(
        "model_warmup { batch_size: -1 }",
        1,
        28,
        "negative value -1 for unsigned field 'batch_size' (uint32)",
    );
    assert_error(
        "dynamic_batching {\n  priority_levels: 18446744073709551616\n}",
        2,
        20,
        "value 18446744073709551616 is out of range for field 'priority_levels' (uint64)",
    );
    assert_error(
        "input { data_type: 2147483648 }",
        1,
        20,
        "value 2147483648 is out of range for field 'data_type' (enum inference.DataType)",
    );
}

#[test]
fn unterminated_strings_point_at_the_opening_quote() {
    let message = "unterminated string: missing closing \" before the end of the line";
    assert_error("name: \"abc", 1, 7, message);
    assert_error("name: \"é\" platform: \"x", 1, 21, message);
    assert_error("name: \"abc\nmax_batch_size: 1", 1, 7, message);
    assert_error(
        "name: 'abc\"",
        1,
        7,
        "unterminated string: missing closing ' before the end of the line",
    );
}

#[test]
fn unexpected_end_names_what_is_left_open() {
    assert_error(
        "\n\ninput {\n  name: \"a\"\n",
        5,
        1,
        "expected '}' to close 'input' opened at 3:1",
    );
    assert_error(
        "input < name: \"a\"",
        1,
        18,
        "expected '>' to close 'input' opened at 1:1",
    );
    assert_error(
        "input [ { name: \"a\" }",
        1,
        22,
        "expected ']' to close the list of 'input' opened at 1:7",
    );
    assert_error(
        "input [ { name: \"a\"",
        1,
        20,
        "expected '}' to close 'input' opened at 1:9",
    );
}

#[test]
fn mismatched_and_stray_delimiters() {
    assert_error(
        "input { name: \"a\" ]",
        1,
        19,
        "expected a field name or '}' to close 'input' opened at 1:1, found ']'",
    );
    assert_error(
        "input < name: \"a\" }",
        1,
        19,
        "expected a field name or '>' to close 'input' opened at 1:1, found '}'",
    );
    assert_error("name: \"a\" }", 1, 11, "expected a field name, found '}'");
    assert_error(", name: \"a\"", 1, 1, "expected a field name, found ','");
    assert_error(
        "name: \"a\",, max_batch_size: 1",
        1,
        11,
        "expected a field name, found ','",
    );
}

#[test]
fn unexpected_characters_and_bad_literals() {
    assert_error("max_batch_size: 8 @", 1, 19, "unexpected character '@'");
    assert_error("max_batch_size = 8", 1, 16, "unexpected character '='");
    assert_error("max_batch_size: 8a", 1, 17, "invalid number '8a'");
    assert_error("name: \"a\\qb\"", 1, 9, "invalid escape sequence '\\q'");
}

#[test]
fn missing_colon_before_a_scalar_value() {
    assert_error(
        "max_batch_size 8",
        1,
        16,
        "expected ':' after field 'max_batch_size', found 8",
    );
    assert_error(
        "input { name \"x\" }",
        1,
        14,
        "expected ':' after field 'name', found \"x\"",
    );
    assert_error(
        "input { dims [1] }",
        1,
        14,
        "expected ':' after field 'dims', found '['",
    );
}

#[test]
fn oneof_members_conflict() {
    assert_error(
        "name: \"m\"\n\ndynamic_batching { }\nsequence_batching { }",
        4,
        1,
        "field 'sequence_batching' conflicts with 'dynamic_batching' set at 3:1: \
         both are in oneof 'scheduling_choice'",
    );
    assert_error(
        "version_policy { latest { } all { } }",
        1,
        29,
        "field 'all' conflicts with 'latest' set at 1:18: both are in oneof 'policy_choice'",
    );
    assert_error(
        "model_warmup { inputs { key: \"a\" value { zero_data: true random_data: true } } }",
        1,
        58,
        "field 'random_data' conflicts with 'zero_data' set at 1:42: \
         both are in oneof 'input_data_type'",
    );
}

#[test]
fn singular_fields_set_twice() {
    assert_error(
        "max_batch_size: 8\nmax_batch_size: 4",
        2,
        1,
        "field 'max_batch_size' is set twice (first at 1:1)",
    );
    assert_error(
        "dynamic_batching { }  dynamic_batching { }",
        1,
        23,
        "field 'dynamic_batching' is set twice (first at 1:1)",
    );
    assert_error(
        "parameters { key: \"a\" key: \"b\" }",
        1,
        23,
        "field 'key' is set twice (first at 1:14)",
    );
}

#[test]
fn list_syntax_errors() {
    assert_error(
        "input { dims: [1, 2, ] }",
        1,
        20,
        "trailing ',' before ']' in the list of 'dims' (remove the last ',')",
    );
    assert_error(
        "input [ { }, ]",
        1,
        12,
        "trailing ',' before ']' in the list of 'input' (remove the last ',')",
    );
    assert_error(
        "input { dims: [1 2] }",
        1,
        18,
        "expected ',' or ']' in the list of 'dims', found 2 (separate list elements with ',')",
    );
    assert_error(
        "max_batch_size: [1]",
        1,
        17,
        "field 'max_batch_size' is not repeated, so it cannot take a list '[...]'",
    );
    assert_error(
        "dynamic_batching [ { } ]",
        1,
        18,
        "field 'dynamic_batching' is not repeated, so it cannot take a list '[...]'",
    );
}
