//! Literals: string escapes and the spelling of numbers.

use super::cursor::Cursor;
use super::error::{Position, Result, TextFormatError};

/// Whether a number literal is an integer or a floating-point number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumberKind {
    Int,
    Float,
}

/// Classifies a number literal (no sign), or `None` when it is malformed.
///
/// Integers are decimal, `0x` hex or `0` octal; floats have a fraction, an
/// exponent or an `f` suffix (`1.5`, `.5`, `3.`, `1e3`, `2.5e-3`, `1f`).
pub(super) fn classify_number(text: &str) -> Option<NumberKind> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let valid = !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
        return valid.then_some(NumberKind::Int);
    }
    if text.chars().all(|c| c.is_ascii_digit()) {
        let octal_ok = !text.starts_with('0') || text.chars().all(|c| c.is_digit(8));
        return octal_ok.then_some(NumberKind::Int);
    }
    is_float(text).then_some(NumberKind::Float)
}

fn is_float(text: &str) -> bool {
    let text = text.strip_suffix(['f', 'F']).unwrap_or(text);
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok =
        digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// The value of an integer literal, or `None` when it does not fit in a `u64`.
pub(super) fn parse_int(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

/// The value of an integer literal read as a floating-point number, or `None`
/// for a hex or octal literal too large for a `u64`.
pub(super) fn int_as_float(text: &str) -> Option<f64> {
    let decimal = !text.starts_with('0');
    parse_int(text)
        .map(|v| v as f64)
        .or_else(|| decimal.then(|| text.parse().ok()).flatten())
}

/// The value of a float literal, `f` suffix allowed.
pub(super) fn parse_float(text: &str) -> Option<f64> {
    text.strip_suffix(['f', 'F']).unwrap_or(text).parse().ok()
}

/// Reads the rest of a string literal after its opening `quote` (which was at
/// `open`) and decodes its escapes.
pub(super) fn string_body(cursor: &mut Cursor<'_>, quote: char, open: Position) -> Result<Vec<u8>> {
    let unterminated = || {
        TextFormatError::new(
            open,
            format!("unterminated string: missing closing {quote} before the end of the line"),
        )
    };
    let mut bytes = Vec::new();
    loop {
        let escape_at = cursor.position();
        match cursor.bump() {
            None | Some('\n') => return Err(unterminated()),
            Some(c) if c == quote => return Ok(bytes),
            Some('\\') => match cursor.bump() {
                None | Some('\n') => return Err(unterminated()),
                Some(c) => escape(cursor, c, escape_at, &mut bytes)?,
            },
            Some(c) => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
}

/// Decodes the escape sequence `\c...` whose backslash was at `at` into `bytes`.
fn escape(cursor: &mut Cursor<'_>, c: char, at: Position, bytes: &mut Vec<u8>) -> Result<()> {
    let error = |message: String| TextFormatError::new(at, message);
    match c {
        'n' => bytes.push(b'\n'),
        't' => bytes.push(b'\t'),
        'r' => bytes.push(b'\r'),
        'a' => bytes.push(0x07),
        'b' => bytes.push(0x08),
        'f' => bytes.push(0x0c),
        'v' => bytes.push(0x0b),
        '\\' | '\'' | '"' | '?' => bytes.push(c as u8),
        'x' | 'X' => match read_digits(cursor, 16, 2, 0) {
            (_, 0) => {
                return Err(error(format!(
                    "invalid escape '\\{c}': expected hex digits"
                )));
            }
            (value, _) => bytes.push(value as u8),
        },
        '0'..='7' => {
            let (value, _) = read_digits(cursor, 8, 2, c.to_digit(8).unwrap_or_default());
            let byte = u8::try_from(value)
                .map_err(|_| error(format!("octal escape '\\{value:o}' is larger than '\\377'")))?;
            bytes.push(byte);
        }
        'u' | 'U' => {
            let width = if c == 'u' { 4 } else { 8 };
            let scalar = match read_digits(cursor, 16, width, 0) {
                (value, read) if read == width => char::from_u32(value),
                _ => None,
            };
            let scalar = scalar.ok_or_else(|| {
                error(format!(
                    "invalid escape '\\{c}': expected {width} hex digits of a Unicode scalar value"
                ))
            })?;
            bytes.extend_from_slice(scalar.encode_utf8(&mut [0; 4]).as_bytes());
        }
        other => return Err(error(format!("invalid escape sequence '\\{other}'"))),
    }
    Ok(())
}

/// Reads up to `max` digits in `radix`, appending them to `value`; returns the
/// value and how many digits were read.
fn read_digits(cursor: &mut Cursor<'_>, radix: u32, max: usize, mut value: u32) -> (u32, usize) {
    let mut read = 0;
    while read < max {
        let Some(digit) = cursor.peek().and_then(|c| c.to_digit(radix)) else {
            break;
        };
        cursor.bump();
        value = value * radix + digit;
        read += 1;
    }
    (value, read)
}

#[cfg(test)]
mod tests {
    use super::super::lexer::{Lexer, TokenKind};
    use super::*;

    fn string(text: &str) -> Result<Vec<u8>> {
        match Lexer::new(text).next()?.kind {
            TokenKind::Str(bytes) => Ok(bytes),
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn c_escapes_are_decoded() {
        assert_eq!(
            string(r#""a\n\t\\\"\'\?\a\b\f\v\r""#),
            Ok(b"a\n\t\\\"'?\x07\x08\x0c\x0b\r".to_vec())
        );
        assert_eq!(string(r#"'\x41\x7e\101\0\12'"#), Ok(b"A~A\0\n".to_vec()));
        assert_eq!(string(r#""\xff""#), Ok(vec![0xff]));
        assert_eq!(
            string(r#""\u00e9\U0001F600""#),
            Ok("é😀".as_bytes().to_vec())
        );
        assert_eq!(string("'say \"hi\"'"), Ok(b"say \"hi\"".to_vec()));
        assert_eq!(string("\"모델\""), Ok("모델".as_bytes().to_vec()));
    }

    #[test]
    fn bad_escapes_point_at_the_backslash() {
        let err = string(r#""ab\q""#).unwrap_err();
        assert_eq!(err.position, Position { line: 1, column: 4 });
        assert_eq!(err.message, "invalid escape sequence '\\q'");
        let err = string(r#""\xg""#).unwrap_err();
        assert_eq!(err.message, "invalid escape '\\x': expected hex digits");
        let err = string(r#""é\400""#).unwrap_err();
        assert_eq!(err.position, Position { line: 1, column: 3 });
        assert_eq!(err.message, "octal escape '\\400' is larger than '\\377'");
        let err = string(r#""\uD800""#).unwrap_err();
        assert!(err.message.starts_with("invalid escape '\\u'"), "{err}");
        let err = string(r#""\u12""#).unwrap_err();
        assert!(err.message.starts_with("invalid escape '\\u'"), "{err}");
    }

    #[test]
    fn unterminated_string_points_at_the_opening_quote() {
        let open = Position { line: 1, column: 3 };
        for text in ["  \"abc", "  \"abc\n\"", "  'abc\"", "  \"abc\\"] {
            let err = string(text).unwrap_err();
            assert_eq!(err.position, open, "{text:?}");
            assert!(err.message.starts_with("unterminated string"), "{err}");
        }
    }

    #[test]
    fn numbers_classify_and_parse() {
        assert_eq!(classify_number("0"), Some(NumberKind::Int));
        assert_eq!(classify_number("0X1f"), Some(NumberKind::Int));
        assert_eq!(classify_number("0x"), None);
        assert_eq!(classify_number("08"), None);
        assert_eq!(classify_number("1.2.3"), None);
        assert_eq!(classify_number("1e"), None);
        assert_eq!(classify_number("1e+5F"), Some(NumberKind::Float));
        assert_eq!(classify_number("1x"), None);
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_int("18446744073709551616"), None);
        assert_eq!(int_as_float("0x10"), Some(16.0));
        assert_eq!(int_as_float("100000000000000000000"), Some(1e20));
        assert_eq!(int_as_float("0x100000000000000000"), None);
        assert_eq!(parse_float("3."), Some(3.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("2.5e-3f"), Some(2.5e-3));
    }
}
