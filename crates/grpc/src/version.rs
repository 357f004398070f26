//! Model versions as gRPC requests carry them: strings, empty for "any".

use oxiserve_types::{Error, Result};

/// The version asked for: `None` when `text` is empty (the version policy
/// chooses). Like Triton (`std::stol`), leading digits are read and the rest
/// ignored; text that starts with no number, or a negative version, is an
/// invalid argument.
pub(crate) fn parse(text: &str) -> Result<Option<i64>> {
    if text.is_empty() {
        return Ok(None);
    }
    let trimmed = text.trim_start();
    let sign = usize::from(trimmed.starts_with(['-', '+']));
    let digits = trimmed[sign..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let number = &trimmed[..sign + digits];
    let version: i64 = match number.parse() {
        Ok(v) if digits > 0 => v,
        Err(_) if digits > 0 => return Err(failed(text, "stol: out of range")),
        _ => return Err(failed(text, "stol")),
    };
    if version < 0 {
        return Err(Error::invalid_arg(format!(
            "invalid model version specified '{text}' , version should be an integral value > 0"
        )));
    }
    Ok(Some(version))
}

fn failed(text: &str, details: &str) -> Error {
    Error::invalid_arg(format!(
        "failed to get model version from specified version string '{text}' (details: \
         {details}), version should be an integral value > 0"
    ))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_versions_as_triton_does() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("3").unwrap(), Some(3));
        assert_eq!(parse("12abc").unwrap(), Some(12));
        assert!(
            parse("abc")
                .unwrap_err()
                .message
                .contains("(details: stol)")
        );
        assert!(parse("-1").unwrap_err().message.contains("'-1'"));
        assert!(
            parse("99999999999999999999")
                .unwrap_err()
                .message
                .contains("out of range")
        );
    }
}
