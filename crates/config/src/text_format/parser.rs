//! The recursive-descent parser: message bodies, fields, lists and map entries.

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage, Value,
};

use super::error::{Position, Result, TextFormatError};
use super::lexer::{Lexer, Token, TokenKind};
use super::seen::Seen;
use super::source_map::SourceMap;
use super::value;
use crate::suggest;

/// Parses all of `text` as one message of type `descriptor`.
pub(super) fn parse_message(
    descriptor: &MessageDescriptor,
    text: &str,
) -> Result<(DynamicMessage, SourceMap)> {
    let mut parser = Parser {
        lexer: Lexer::new(text),
        source_map: SourceMap::default(),
    };
    let mut message = DynamicMessage::new(descriptor.clone());
    parser.message_body(&mut message, "", None)?;
    Ok((message, parser.source_map))
}

/// The delimiter that ends a message body, and the field whose value it opened.
struct Closing<'a> {
    symbol: char,
    field: &'a str,
    opened: Position,
}

impl<'a> Closing<'a> {
    /// The closing partner of `open` (`{` or `<`), opened at `opened` for `field`.
    fn new(open: char, field: &'a FieldDescriptor, opened: Position) -> Self {
        Closing {
            symbol: if open == '<' { '>' } else { '}' },
            field: field.name(),
            opened,
        }
    }
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    source_map: SourceMap,
}

impl Parser<'_> {
    /// Reads fields into `message` (at `path`) until `closing`, or the end of
    /// the text for the top-level message.
    fn message_body(
        &mut self,
        message: &mut DynamicMessage,
        path: &str,
        closing: Option<&Closing<'_>>,
    ) -> Result<()> {
        let mut seen = Seen::default();
        // The last field read, when it is a repeated scalar (for a hint).
        let mut last_list: Option<String> = None;
        loop {
            let token = self.lexer.next()?;
            match token.kind {
                TokenKind::Ident(name) => {
                    self.field(message, path, &mut seen, &name, token.position)?;
                    last_list = message
                        .descriptor()
                        .get_field_by_name(&name)
                        .filter(|f| f.is_list() && !matches!(f.kind(), Kind::Message(_)))
                        .map(|_| name);
                    if self.lexer.eat_symbol(';')?.is_none() {
                        self.lexer.eat_symbol(',')?;
                    }
                }
                TokenKind::Symbol(c) if closing.is_some_and(|closing| closing.symbol == c) => {
                    return Ok(());
                }
                TokenKind::End if closing.is_none() => return Ok(()),
                TokenKind::Int(_) | TokenKind::Float(_) | TokenKind::Str(_)
                    if last_list.is_some() =>
                {
                    let mut error = not_a_field(&token, closing);
                    let name = last_list.unwrap_or_default();
                    error.message +=
                        &format!("; to give '{name}' several values write '{name}: [a, b]'");
                    return Err(error);
                }
                _ => return Err(not_a_field(&token, closing)),
            }
        }
    }

    /// Reads the value of the field `name` (written at `position`) into `message`.
    fn field(
        &mut self,
        message: &mut DynamicMessage,
        path: &str,
        seen: &mut Seen,
        name: &str,
        position: Position,
    ) -> Result<()> {
        let descriptor = message.descriptor();
        let field = descriptor
            .get_field_by_name(name)
            .ok_or_else(|| unknown_field(&descriptor, name, position))?;
        seen.set(&field, position)?;
        let field_path = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        };
        self.source_map.record(field_path.clone(), position);
        match field.kind() {
            Kind::Message(type_) => {
                self.message_field(message, &field, &type_, &field_path, position)
            }
            _ => self.scalar_field(message, &field),
        }
    }

    /// After a scalar field's name: `: value` or `: [ value, ... ]`.
    fn scalar_field(
        &mut self,
        message: &mut DynamicMessage,
        field: &FieldDescriptor,
    ) -> Result<()> {
        if self.lexer.eat_symbol(':')?.is_none() {
            let token = self.lexer.peek()?;
            // `name { ...` is a wrong kind of value rather than a missing ':'.
            if !matches!(token.kind, TokenKind::Symbol('{' | '<')) {
                return Err(TextFormatError::new(
                    token.position,
                    format!(
                        "expected ':' after field '{}', found {}",
                        field.name(),
                        token.kind
                    ),
                ));
            }
        }
        if let Some(open) = self.lexer.eat_symbol('[')? {
            if !field.is_list() {
                return Err(not_repeated(field, open));
            }
            return self.list(field, open, |parser| {
                push(message, field, value::scalar(&mut parser.lexer, field)?);
                Ok(())
            });
        }
        let value = value::scalar(&mut self.lexer, field)?;
        if field.is_list() {
            push(message, field, value);
        } else {
            message.set_field(field, value);
        }
        Ok(())
    }

    /// After a message field's name: optional `:`, then `{ ... }`, `< ... >`
    /// or, for repeated and map fields, `[ { ... }, ... ]`.
    fn message_field(
        &mut self,
        message: &mut DynamicMessage,
        field: &FieldDescriptor,
        type_: &MessageDescriptor,
        field_path: &str,
        position: Position,
    ) -> Result<()> {
        self.lexer.eat_symbol(':')?;
        let token = self.lexer.next()?;
        match token.kind {
            TokenKind::Symbol('[') if field.is_list() || field.is_map() => {
                self.list(field, token.position, |parser| {
                    let token = parser.lexer.next()?;
                    match token.kind {
                        TokenKind::Symbol(open @ ('{' | '<')) => {
                            let closing = Closing::new(open, field, token.position);
                            parser.element(message, field, type_, field_path, &closing)
                        }
                        _ => Err(value::mismatch(field, &token)),
                    }
                })
            }
            TokenKind::Symbol('[') => Err(not_repeated(field, token.position)),
            TokenKind::Symbol(open @ ('{' | '<')) => {
                let closing = Closing::new(open, field, position);
                self.element(message, field, type_, field_path, &closing)
            }
            _ => Err(value::mismatch(field, &token)),
        }
    }

    /// Reads one message of `field` after its opening delimiter: the value of
    /// a singular field, an element of a repeated one, or a map entry.
    fn element(
        &mut self,
        message: &mut DynamicMessage,
        field: &FieldDescriptor,
        type_: &MessageDescriptor,
        field_path: &str,
        closing: &Closing<'_>,
    ) -> Result<()> {
        if field.is_map() {
            return self.map_entry(message, field, type_, field_path, closing);
        }
        let mut child = DynamicMessage::new(type_.clone());
        if field.is_list() {
            let index = message.get_field(field).as_list().map_or(0, <[Value]>::len);
            let element_path = format!("{field_path}[{index}]");
            self.source_map.record(element_path.clone(), closing.opened);
            self.message_body(&mut child, &element_path, Some(closing))?;
            push(message, field, Value::Message(child));
        } else {
            self.message_body(&mut child, field_path, Some(closing))?;
            message.set_field(field, Value::Message(child));
        }
        Ok(())
    }

    /// Reads a map entry `{ key: ... value: ... }`; a repeated key replaces
    /// the earlier entry.
    fn map_entry(
        &mut self,
        message: &mut DynamicMessage,
        field: &FieldDescriptor,
        entry_type: &MessageDescriptor,
        field_path: &str,
        closing: &Closing<'_>,
    ) -> Result<()> {
        let mut entry = DynamicMessage::new(entry_type.clone());
        let outer = std::mem::take(&mut self.source_map);
        let parsed = self.message_body(&mut entry, "", Some(closing));
        let entry_map = std::mem::replace(&mut self.source_map, outer);
        parsed?;
        let key = entry
            .get_field(&entry_type.map_entry_key_field())
            .into_owned()
            .into_map_key()
            .expect("protobuf map keys are integers, bools or strings");
        let value = entry
            .get_field(&entry_type.map_entry_value_field())
            .into_owned();
        let entry_path = format!("{field_path}[{}]", key_label(&key));
        self.source_map
            .record_map_entry(&entry_path, closing.opened, entry_map);
        match message.get_field_mut(field) {
            Value::Map(entries) => entries.insert(key, value),
            other => unreachable!("map field '{}' holds {other:?}", field.name()),
        };
        Ok(())
    }

    /// Reads the elements of a list of `field` whose `[` was at `open`, each
    /// with `element`; elements are separated by `,`, a trailing `,` is an error.
    fn list(
        &mut self,
        field: &FieldDescriptor,
        open: Position,
        mut element: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if self.lexer.eat_symbol(']')?.is_some() {
            return Ok(());
        }
        loop {
            element(self)?;
            let token = self.lexer.next()?;
            let message = match token.kind {
                TokenKind::Symbol(']') => return Ok(()),
                TokenKind::Symbol(',') if self.lexer.peek()?.kind != TokenKind::Symbol(']') => {
                    continue;
                }
                TokenKind::Symbol(',') => format!(
                    "trailing ',' before ']' in the list of '{}' (remove the last ',')",
                    field.name()
                ),
                TokenKind::End => format!(
                    "expected ']' to close the list of '{}' opened at {open}",
                    field.name()
                ),
                found => format!(
                    "expected ',' or ']' in the list of '{}', found {found} (separate list elements with ',')",
                    field.name()
                ),
            };
            return Err(TextFormatError::new(token.position, message));
        }
    }
}

/// Appends `value` to the repeated `field`.
fn push(message: &mut DynamicMessage, field: &FieldDescriptor, value: Value) {
    match message.get_field_mut(field) {
        Value::List(items) => items.push(value),
        other => unreachable!("repeated field '{}' holds {other:?}", field.name()),
    }
}

/// How a map key appears in a source map path: strings quoted, others bare.
fn key_label(key: &MapKey) -> String {
    match key {
        MapKey::String(text) => format!("{text:?}"),
        MapKey::Bool(value) => value.to_string(),
        MapKey::I32(value) => value.to_string(),
        MapKey::I64(value) => value.to_string(),
        MapKey::U32(value) => value.to_string(),
        MapKey::U64(value) => value.to_string(),
    }
}

/// The error for `found` where a field name (or the closing delimiter) belongs.
fn not_a_field(found: &Token, closing: Option<&Closing<'_>>) -> TextFormatError {
    let message = match closing {
        Some(Closing {
            symbol,
            field,
            opened,
        }) if found.kind == TokenKind::End => {
            format!("expected '{symbol}' to close '{field}' opened at {opened}")
        }
        Some(Closing {
            symbol,
            field,
            opened,
        }) => format!(
            "expected a field name or '{symbol}' to close '{field}' opened at {opened}, found {}",
            found.kind
        ),
        None => format!("expected a field name, found {}", found.kind),
    };
    TextFormatError::new(found.position, message)
}

fn not_repeated(field: &FieldDescriptor, position: Position) -> TextFormatError {
    TextFormatError::new(
        position,
        format!(
            "field '{}' is not repeated, so it cannot take a list '[...]'",
            field.name()
        ),
    )
}

fn unknown_field(
    descriptor: &MessageDescriptor,
    name: &str,
    position: Position,
) -> TextFormatError {
    let fields: Vec<FieldDescriptor> = descriptor.fields().collect();
    let names: Vec<&str> = fields.iter().map(FieldDescriptor::name).collect();
    TextFormatError::new(
        position,
        format!(
            "unknown field '{name}' in {}{}",
            descriptor.full_name(),
            suggest::hint(name, &names, "fields")
        ),
    )
}
