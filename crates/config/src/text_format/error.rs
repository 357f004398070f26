//! Positions in the source text and the parse error that carries one.

use std::fmt;

/// 1-based line and column (column counts chars, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column number in chars, starting at 1.
    pub column: u32,
}

impl Position {
    /// The first char of a text.
    pub(super) const START: Position = Position { line: 1, column: 1 };
}

impl fmt::Display for Position {
    /// Formats as `line:column`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A text format error: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct TextFormatError {
    /// Where the problem is in the text.
    pub position: Position,
    /// What is wrong, naming the field and message type involved.
    pub message: String,
}

impl TextFormatError {
    pub(super) fn new(position: Position, message: impl Into<String>) -> Self {
        TextFormatError {
            position,
            message: message.into(),
        }
    }
}

impl fmt::Display for TextFormatError {
    /// Formats as `line:column: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.position, self.message)
    }
}

impl std::error::Error for TextFormatError {}

/// Result of the parser's steps.
pub(super) type Result<T> = std::result::Result<T, TextFormatError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_line_column_and_message() {
        let err = TextFormatError::new(
            Position {
                line: 3,
                column: 14,
            },
            "bad value",
        );
        assert_eq!(err.to_string(), "3:14: bad value");
    }

    #[test]
    fn positions_order_by_line_then_column() {
        let a = Position { line: 1, column: 9 };
        let b = Position { line: 2, column: 1 };
        assert!(a < b);
        assert_eq!(Position::START.to_string(), "1:1");
    }
}
