//! The values of a settings request as Triton reads them (`std::stoi`),
//! with its error texts, shared by the HTTP and gRPC trace extensions.

use oxiserve_types::{Error, Result};

use crate::level::TraceLevel;

/// Why a text is no `int`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotAnInt {
    /// No digit where the number should start.
    Invalid,
    /// Too large for an `int`.
    OutOfRange,
}

/// `std::stoi`: leading white space, a sign, digits, and anything after
/// them ignored.
pub fn stoi(text: &str) -> std::result::Result<i32, NotAnInt> {
    let rest = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, rest) = match rest.as_bytes().first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(NotAnInt::Invalid);
    }
    let magnitude = rest[..digits].bytes().try_fold(0i64, |n, d| {
        n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    });
    let value = magnitude.map(|m| if negative { -m } else { m });
    value
        .and_then(|v| i32::try_from(v).ok())
        .ok_or(NotAnInt::OutOfRange)
}

/// `trace_rate` or `log_frequency` (`setting`): an `int`, taken as
/// unsigned as Triton does (-1 is 4294967295).
pub fn parse_unsigned(setting: &str, text: &str) -> Result<u32> {
    match stoi(text) {
        Ok(value) => Ok(value as u32),
        Err(NotAnInt::OutOfRange) => Err(Error::invalid_arg(format!(
            "Unable to parse '{setting}', value is out of range [ 0, 4294967295 ], got: {text}"
        ))),
        Err(NotAnInt::Invalid) => Err(Error::invalid_arg(format!(
            "Unable to parse '{setting}', got: {text}"
        ))),
    }
}

/// `trace_count`: an `int` of at least -1. Triton's HTTP and gRPC texts
/// differ by a space before the value: `spaced` adds it.
pub fn parse_count(text: &str, spaced: bool) -> Result<i32> {
    match stoi(text) {
        Ok(value) if value < -1 => {
            let space = if spaced { " " } else { "" };
            Err(Error::invalid_arg(format!(
                "Unable to parse 'trace_count'. Expecting value >= -1, got:{space}{text}"
            )))
        }
        Ok(value) => Ok(value),
        Err(NotAnInt::OutOfRange) => Err(Error::invalid_arg(format!(
            "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: {text}"
        ))),
        Err(NotAnInt::Invalid) => Err(Error::invalid_arg(format!(
            "Unable to parse 'trace_count', got: {text}"
        ))),
    }
}

/// `trace_level`'s names: `OFF` alone, or `TIMESTAMPS` and/or `TENSORS`;
/// other names are ignored. `None` when no name set a level.
pub fn parse_levels(names: &[&str]) -> Result<Option<TraceLevel>> {
    let mut level = None;
    for name in names {
        let named = match *name {
            "OFF" if names.len() == 1 => TraceLevel::OFF,
            "OFF" => {
                return Err(Error::invalid_arg(
                    "Expect only one trace level 'OFF' is specified",
                ));
            }
            "TIMESTAMPS" => TraceLevel::TIMESTAMPS,
            "TENSORS" => TraceLevel::TENSORS,
            _ => continue,
        };
        level = Some(level.unwrap_or(TraceLevel::OFF).union(named));
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_stoi_reads_them() {
        assert_eq!(parse_unsigned("trace_rate", " 7").unwrap(), 7);
        assert_eq!(parse_unsigned("trace_rate", "7.9").unwrap(), 7);
        assert_eq!(parse_unsigned("trace_rate", "+8").unwrap(), 8);
        assert_eq!(parse_unsigned("trace_rate", "-3").unwrap(), 4294967293);
        assert_eq!(
            parse_unsigned("trace_rate", "abc").unwrap_err().message,
            "Unable to parse 'trace_rate', got: abc"
        );
        assert_eq!(
            parse_unsigned("log_frequency", "4294967295")
                .unwrap_err()
                .message,
            "Unable to parse 'log_frequency', value is out of range [ 0, 4294967295 ], got: \
             4294967295"
        );
        assert_eq!(parse_count("-1", false).unwrap(), -1);
        assert_eq!(
            parse_count("-5", false).unwrap_err().message,
            "Unable to parse 'trace_count'. Expecting value >= -1, got:-5"
        );
        assert_eq!(
            parse_count("-5", true).unwrap_err().message,
            "Unable to parse 'trace_count'. Expecting value >= -1, got: -5"
        );
    }

    #[test]
    fn levels() {
        assert_eq!(parse_levels(&["OFF"]).unwrap(), Some(TraceLevel::OFF));
        let both = TraceLevel::TIMESTAMPS.union(TraceLevel::TENSORS);
        assert_eq!(
            parse_levels(&["TENSORS", "TIMESTAMPS"]).unwrap(),
            Some(both)
        );
        assert_eq!(parse_levels(&["timestamps", "BOGUS"]).unwrap(), None);
        assert_eq!(parse_levels(&[]).unwrap(), None);
        assert!(parse_levels(&["OFF", "TIMESTAMPS"]).is_err());
    }
}
