//! Reading the text char by char, tracking line and column.

use super::error::Position;

/// Reads chars of the text while tracking line and column.
pub(super) struct Cursor<'a> {
    rest: &'a str,
    position: Position,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor {
            rest: text,
            position: Position::START,
        }
    }

    /// Position of the next char (or of the end of the text).
    pub fn position(&self) -> Position {
        self.position
    }

    /// The next char without consuming it.
    pub fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    /// The char after the next one.
    pub fn peek_second(&self) -> Option<char> {
        self.rest.chars().nth(1)
    }

    /// Consumes and returns the next char.
    pub fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        if c == '\n' {
            self.position.line += 1;
            self.position.column = 1;
        } else {
            self.position.column += 1;
        }
        Some(c)
    }

    /// Consumes chars while `keep` holds for them and returns them.
    pub fn take_while(&mut self, mut keep: impl FnMut(char) -> bool) -> &'a str {
        let rest = self.rest;
        let len = rest.find(|c| !keep(c)).unwrap_or(rest.len());
        for _ in rest[..len].chars() {
            self.bump();
        }
        &rest[..len]
    }
}
