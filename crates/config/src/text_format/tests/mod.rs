//! Tests of the parser against Triton's `ModelConfig` schema.

mod errors;
mod model_config;
mod syntax;

use prost_reflect::{DynamicMessage, MessageDescriptor};

use super::{Position, SourceMap, TextFormatError, parse};

fn descriptor() -> MessageDescriptor {
    oxiserve_proto::model_config_descriptor()
}

/// Parses `text` as a `ModelConfig`, panicking with the error if it fails.
fn parse_ok(text: &str) -> (DynamicMessage, SourceMap) {
    parse(&descriptor(), text).unwrap_or_else(|err| panic!("{err}\nin:\n{text}"))
}

/// Parses `text` as a prost `ModelConfig`.
fn config(text: &str) -> oxiserve_proto::ModelConfig {
    parse_ok(text)
        .0
        .transcode_to()
        .expect("parsed message transcodes to ModelConfig")
}

/// The error parsing `text` as a `ModelConfig`, panicking if it parses.
fn parse_err(text: &str) -> TextFormatError {
    match parse(&descriptor(), text) {
        Ok((message, _)) => panic!("expected an error, parsed {message:?}"),
        Err(err) => err,
    }
}

fn at(line: u32, column: u32) -> Position {
    Position { line, column }
}
