//! Tokens of the text format, each with the position where it starts.

use std::fmt;

use super::cursor::Cursor;
use super::error::{Position, Result, TextFormatError};
use super::literal;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TokenKind {
    /// A name: field name, enum value, `true`, `inf`, ...
    Ident(String),
    /// An integer literal as written: decimal, `0x` hex or `0` octal, no sign.
    Int(String),
    /// A floating-point literal as written, possibly with an `f` suffix, no sign.
    Float(String),
    /// A string literal with its escapes decoded.
    Str(Vec<u8>),
    /// One of `{ } < > [ ] : , ; -`.
    Symbol(char),
    /// The end of the text.
    End,
}

impl fmt::Display for TokenKind {
    /// Formats the token as an error message quotes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(text) | TokenKind::Int(text) | TokenKind::Float(text) => {
                f.write_str(text)
            }
            TokenKind::Str(bytes) => write!(f, "{:?}", String::from_utf8_lossy(bytes)),
            TokenKind::Symbol(symbol) => write!(f, "'{symbol}'"),
            TokenKind::End => f.write_str("end of input"),
        }
    }
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub kind: TokenKind,
    pub position: Position,
}

/// Turns text into tokens on demand, one token of look-ahead.
pub(super) struct Lexer<'a> {
    cursor: Cursor<'a>,
    peeked: Option<Token>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Lexer {
            cursor: Cursor::new(text),
            peeked: None,
        }
    }

    /// The next token, without consuming it.
    pub fn peek(&mut self) -> Result<&Token> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.scan()?,
        };
        Ok(self.peeked.insert(token))
    }

    /// Consumes and returns the next token.
    pub fn next(&mut self) -> Result<Token> {
        match self.peeked.take() {
            Some(token) => Ok(token),
            None => self.scan(),
        }
    }

    /// Consumes the next token if it is `symbol`, returning its position.
    pub fn eat_symbol(&mut self, symbol: char) -> Result<Option<Position>> {
        let token = self.peek()?;
        if token.kind != TokenKind::Symbol(symbol) {
            return Ok(None);
        }
        let position = token.position;
        self.peeked = None;
        Ok(Some(position))
    }

    fn scan(&mut self) -> Result<Token> {
        self.skip_blanks_and_comments();
        let position = self.cursor.position();
        let kind = match self.cursor.peek() {
            None => TokenKind::End,
            Some(c) if c.is_ascii_alphabetic() || c == '_' => TokenKind::Ident(
                self.cursor
                    .take_while(|c| c.is_ascii_alphanumeric() || c == '_')
                    .to_owned(),
            ),
            Some(c) if c.is_ascii_digit() => self.number(position)?,
            Some('.')
                if self
                    .cursor
                    .peek_second()
                    .is_some_and(|c| c.is_ascii_digit()) =>
            {
                self.number(position)?
            }
            Some(quote @ ('"' | '\'')) => {
                self.cursor.bump();
                TokenKind::Str(literal::string_body(&mut self.cursor, quote, position)?)
            }
            Some(c @ ('{' | '}' | '<' | '>' | '[' | ']' | ':' | ',' | ';' | '-')) => {
                self.cursor.bump();
                TokenKind::Symbol(c)
            }
            Some(c) => {
                return Err(TextFormatError::new(
                    position,
                    format!("unexpected character {c:?}"),
                ));
            }
        };
        Ok(Token { kind, position })
    }

    fn skip_blanks_and_comments(&mut self) {
        loop {
            self.cursor.take_while(char::is_whitespace);
            if self.cursor.peek() != Some('#') {
                return;
            }
            self.cursor.take_while(|c| c != '\n');
        }
    }

    /// Reads a number literal; letters glued to it make it invalid as a whole.
    fn number(&mut self, position: Position) -> Result<TokenKind> {
        let hex =
            self.cursor.peek() == Some('0') && matches!(self.cursor.peek_second(), Some('x' | 'X'));
        let mut previous = '\0';
        let text = self.cursor.take_while(|c| {
            let is_exponent_sign = !hex && matches!(c, '+' | '-') && matches!(previous, 'e' | 'E');
            previous = c;
            c.is_ascii_alphanumeric() || c == '_' || c == '.' || is_exponent_sign
        });
        match literal::classify_number(text) {
            Some(literal::NumberKind::Int) => Ok(TokenKind::Int(text.to_owned())),
            Some(literal::NumberKind::Float) => Ok(TokenKind::Float(text.to_owned())),
            None => Err(TextFormatError::new(
                position,
                format!("invalid number '{text}'"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<(TokenKind, u32, u32)> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let token = lexer.next().expect("valid tokens");
            let end = token.kind == TokenKind::End;
            out.push((token.kind, token.position.line, token.position.column));
            if end {
                return out;
            }
        }
    }

    fn error(text: &str) -> TextFormatError {
        let mut lexer = Lexer::new(text);
        loop {
            match lexer.next() {
                Ok(token) if token.kind == TokenKind::End => panic!("no error in {text:?}"),
                Ok(_) => {}
                Err(err) => return err,
            }
        }
    }

    fn ident(name: &str) -> TokenKind {
        TokenKind::Ident(name.to_owned())
    }

    #[test]
    fn positions_count_chars_and_lines() {
        let text = "a: \"한국어\" b\n  # comment { \n c:-1.5f";
        assert_eq!(
            tokens(text),
            vec![
                (ident("a"), 1, 1),
                (TokenKind::Symbol(':'), 1, 2),
                (TokenKind::Str("한국어".as_bytes().to_vec()), 1, 4),
                (ident("b"), 1, 10),
                (ident("c"), 3, 2),
                (TokenKind::Symbol(':'), 3, 3),
                (TokenKind::Symbol('-'), 3, 4),
                (TokenKind::Float("1.5f".to_owned()), 3, 5),
                (TokenKind::End, 3, 9),
            ]
        );
    }

    #[test]
    fn numbers_are_classified() {
        let kinds: Vec<TokenKind> = tokens("0 42 0x1F 017 1.5 .5 1e3 2.5e-3 1f 3. 0x1e-5")
            .into_iter()
            .map(|(kind, _, _)| kind)
            .collect();
        let int = |s: &str| TokenKind::Int(s.to_owned());
        let float = |s: &str| TokenKind::Float(s.to_owned());
        assert_eq!(
            kinds,
            vec![
                int("0"),
                int("42"),
                int("0x1F"),
                int("017"),
                float("1.5"),
                float(".5"),
                float("1e3"),
                float("2.5e-3"),
                float("1f"),
                float("3."),
                int("0x1e"),
                TokenKind::Symbol('-'),
                int("5"),
                TokenKind::End,
            ]
        );
    }

    #[test]
    fn crlf_line_endings() {
        assert_eq!(
            tokens("a # c\r\n\r\n b"),
            vec![
                (ident("a"), 1, 1),
                (ident("b"), 3, 2),
                (TokenKind::End, 3, 3)
            ]
        );
    }

    #[test]
    fn comment_at_end_without_newline() {
        assert_eq!(
            tokens("a # trailing"),
            vec![(ident("a"), 1, 1), (TokenKind::End, 1, 13)]
        );
    }

    #[test]
    fn peek_then_next_return_the_same_token() {
        let mut lexer = Lexer::new("x ;");
        assert_eq!(lexer.peek().map(|t| t.kind.clone()), Ok(ident("x")));
        assert_eq!(lexer.next().map(|t| t.kind), Ok(ident("x")));
        assert_eq!(lexer.eat_symbol(','), Ok(None));
        assert_eq!(
            lexer.eat_symbol(';'),
            Ok(Some(Position { line: 1, column: 3 }))
        );
    }

    #[test]
    fn unexpected_character_after_multibyte_text() {
        let err = error("name: \"é\" @");
        assert_eq!(
            err.position,
            Position {
                line: 1,
                column: 11
            }
        );
        assert_eq!(err.message, "unexpected character '@'");
    }

    #[test]
    fn number_glued_to_letters_is_invalid() {
        let err = error("dims: 12abc");
        assert_eq!(err.position, Position { line: 1, column: 7 });
        assert_eq!(err.message, "invalid number '12abc'");
        assert_eq!(error("x: 09").message, "invalid number '09'");
    }

    #[test]
    fn tokens_display_as_quoted_in_messages() {
        assert_eq!(TokenKind::Symbol('{').to_string(), "'{'");
        assert_eq!(TokenKind::Str(b"eight".to_vec()).to_string(), "\"eight\"");
        assert_eq!(TokenKind::End.to_string(), "end of input");
        assert_eq!(ident("TYPE_FP32").to_string(), "TYPE_FP32");
    }
}
