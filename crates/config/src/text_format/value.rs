//! Scalar values (numbers, bools, strings, enums) read for a field's kind.

use prost::bytes::Bytes;
use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind, Value};

use super::error::{Position, Result, TextFormatError};
use super::lexer::{Lexer, Token, TokenKind};
use super::literal;
use crate::suggest;

/// Reads one value of `field`'s scalar kind (a string may be several adjacent literals).
pub(super) fn scalar(lexer: &mut Lexer<'_>, field: &FieldDescriptor) -> Result<Value> {
    Ok(match field.kind() {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(integer(lexer, field)?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(integer(lexer, field)?),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(integer(lexer, field)?),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(integer(lexer, field)?),
        Kind::Float => Value::F32(float(lexer, field)? as f32),
        Kind::Double => Value::F64(float(lexer, field)?),
        Kind::Bool => Value::Bool(boolean(lexer, field)?),
        Kind::String => {
            let (bytes, position) = string_bytes(lexer, field)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                TextFormatError::new(
                    position,
                    format!(
                        "field '{}' is a string, but the literal is not valid UTF-8",
                        field.name()
                    ),
                )
            })?;
            Value::String(text)
        }
        Kind::Bytes => Value::Bytes(Bytes::from(string_bytes(lexer, field)?.0)),
        Kind::Enum(descriptor) => Value::EnumNumber(enumeration(lexer, field, &descriptor)?),
        Kind::Message(_) => return Err(mismatch(field, &lexer.next()?)),
    })
}

/// The error for a token that cannot be a value of `field`.
pub(super) fn mismatch(field: &FieldDescriptor, found: &Token) -> TextFormatError {
    TextFormatError::new(
        found.position,
        format!(
            "field '{}' expects {}, found {}",
            field.name(),
            expectation(&field.kind()),
            found.kind
        ),
    )
}

/// How an error message names what a field of `kind` takes.
fn expectation(kind: &Kind) -> String {
    match kind {
        Kind::Float | Kind::Double => format!("a number ({})", type_name(kind)),
        Kind::Bool => "a bool (true or false)".to_owned(),
        Kind::String => "a string".to_owned(),
        Kind::Bytes => "a string (bytes)".to_owned(),
        Kind::Enum(descriptor) => format!("an enum value ({})", descriptor.full_name()),
        Kind::Message(descriptor) => format!("a message ({})", descriptor.full_name()),
        _ => format!("an integer ({})", type_name(kind)),
    }
}

/// The protobuf name of a field type, as in a .proto file.
fn type_name(kind: &Kind) -> String {
    let name = match kind {
        Kind::Double => "double",
        Kind::Float => "float",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
        Kind::Uint32 => "uint32",
        Kind::Uint64 => "uint64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
        Kind::Fixed32 => "fixed32",
        Kind::Fixed64 => "fixed64",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        Kind::Enum(descriptor) => return format!("enum {}", descriptor.full_name()),
        Kind::Message(descriptor) => return descriptor.full_name().to_owned(),
    };
    name.to_owned()
}

/// Reads an integer literal, optionally negative, that must fit in `T`.
fn integer<T: TryFrom<i128>>(lexer: &mut Lexer<'_>, field: &FieldDescriptor) -> Result<T> {
    let start = lexer.peek()?.position;
    let negative = lexer.eat_symbol('-')?.is_some();
    let token = lexer.next()?;
    let TokenKind::Int(text) = &token.kind else {
        return Err(mismatch(field, &token));
    };
    let magnitude = literal::parse_int(text).map(i128::from);
    let value = magnitude.map(|m| if negative { -m } else { m });
    if let Some(value) = value.and_then(|v| T::try_from(v).ok()) {
        return Ok(value);
    }
    let kind = field.kind();
    let sign = if negative { "-" } else { "" };
    let unsigned = matches!(
        kind,
        Kind::Uint32 | Kind::Uint64 | Kind::Fixed32 | Kind::Fixed64
    );
    let message = if negative && unsigned {
        format!(
            "negative value {sign}{text} for unsigned field '{}' ({})",
            field.name(),
            type_name(&kind)
        )
    } else {
        format!(
            "value {sign}{text} is out of range for field '{}' ({})",
            field.name(),
            type_name(&kind)
        )
    };
    Err(TextFormatError::new(start, message))
}

/// Reads a floating-point value: a number, `inf`, `infinity` or `nan`, optionally negative.
fn float(lexer: &mut Lexer<'_>, field: &FieldDescriptor) -> Result<f64> {
    let negative = lexer.eat_symbol('-')?.is_some();
    let token = lexer.next()?;
    let magnitude = match &token.kind {
        TokenKind::Float(text) => literal::parse_float(text),
        TokenKind::Int(text) => literal::int_as_float(text),
        TokenKind::Ident(name) => match name.to_ascii_lowercase().as_str() {
            "inf" | "infinity" => Some(f64::INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        },
        _ => None,
    };
    let magnitude = magnitude.ok_or_else(|| mismatch(field, &token))?;
    Ok(if negative { -magnitude } else { magnitude })
}

/// Reads `true`/`True`/`t`/`1` or `false`/`False`/`f`/`0`.
fn boolean(lexer: &mut Lexer<'_>, field: &FieldDescriptor) -> Result<bool> {
    let token = lexer.next()?;
    match &token.kind {
        TokenKind::Ident(name) if matches!(name.as_str(), "true" | "True" | "t") => Ok(true),
        TokenKind::Ident(name) if matches!(name.as_str(), "false" | "False" | "f") => Ok(false),
        TokenKind::Int(text) if text == "1" => Ok(true),
        TokenKind::Int(text) if text == "0" => Ok(false),
        _ => Err(mismatch(field, &token)),
    }
}

/// Reads one or more adjacent string literals, concatenated.
fn string_bytes(lexer: &mut Lexer<'_>, field: &FieldDescriptor) -> Result<(Vec<u8>, Position)> {
    let token = lexer.next()?;
    let TokenKind::Str(mut bytes) = token.kind else {
        return Err(mismatch(field, &token));
    };
    while let TokenKind::Str(more) = &lexer.peek()?.kind {
        bytes.extend_from_slice(more);
        lexer.next()?;
    }
    Ok((bytes, token.position))
}

/// Reads an enum value by name or by number (any `i32`: proto3 enums are open).
fn enumeration(
    lexer: &mut Lexer<'_>,
    field: &FieldDescriptor,
    descriptor: &EnumDescriptor,
) -> Result<i32> {
    let token = lexer.peek()?.clone();
    match &token.kind {
        TokenKind::Int(_) | TokenKind::Symbol('-') => integer(lexer, field),
        TokenKind::Ident(name) => {
            lexer.next()?;
            descriptor
                .get_value_by_name(name)
                .map(|value| value.number())
                .ok_or_else(|| unknown_enum_value(field, descriptor, name, token.position))
        }
        TokenKind::Str(bytes)
            if descriptor
                .get_value_by_name(&String::from_utf8_lossy(bytes))
                .is_some() =>
        {
            let mut error = mismatch(field, &token);
            error.message.push_str("; write enum values without quotes");
            Err(error)
        }
        _ => Err(mismatch(field, &token)),
    }
}

fn unknown_enum_value(
    field: &FieldDescriptor,
    descriptor: &EnumDescriptor,
    name: &str,
    position: Position,
) -> TextFormatError {
    let values: Vec<_> = descriptor.values().collect();
    let names: Vec<&str> = values.iter().map(|value| value.name()).collect();
    TextFormatError::new(
        position,
        format!(
            "unknown value '{name}' for field '{}' (enum {}){}",
            field.name(),
            descriptor.full_name(),
            suggest::hint(name, &names, "values")
        ),
    )
}
