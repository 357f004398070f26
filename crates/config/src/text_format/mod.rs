//! Protobuf text format, parsed against a message descriptor.
//!
//! Accepts what C++ protobuf's text format parser accepts in Triton's
//! `config.pbtxt` files: `#` comments; fields separated by whitespace, `,` or
//! `;`; `name: value` scalars; `name { ... }`, `name: { ... }` and `< ... >`
//! messages; repeated fields written repeatedly or as lists (`dims: [ 3, -1 ]`,
//! `input [ { ... }, { ... } ]`); map fields as `key`/`value` entries; enums by
//! name or number; quoted strings with C escapes, adjacent literals joined.
//!
//! Errors carry the 1-based line and column of the problem and name the field
//! and message type, with "did you mean" suggestions for misspelled names.
//! Unlike C++ protobuf, extensions (`[pkg.ext]`) and `Any` expansion are not
//! supported: Triton's configuration uses neither.

mod cursor;
mod error;
mod lexer;
mod literal;
mod parser;
mod seen;
mod source_map;
mod value;

#[cfg(test)]
mod tests;

use prost_reflect::{DynamicMessage, MessageDescriptor};

pub use error::{Position, TextFormatError};
pub use source_map::SourceMap;

/// Parses `text` as a message of type `descriptor`, returning the message and
/// where each of its fields was written.
///
/// A leading byte order mark is skipped; an empty text is the default message.
pub fn parse(
    descriptor: &MessageDescriptor,
    text: &str,
) -> Result<(DynamicMessage, SourceMap), TextFormatError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    parser::parse_message(descriptor, text)
}
