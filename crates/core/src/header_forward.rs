//! `--http-header-forward-pattern` / `--grpc-header-forward-pattern`: the
//! headers of an inference request whose names match become string
//! parameters of the request, which a model reads (`request.parameters()`
//! in Python), as Triton forwards them.

use oxiserve_types::{ParameterValue, Parameters};
use regex::{Regex, RegexBuilder};

/// The header names to forward.
#[derive(Debug, Clone)]
pub struct HeaderForward {
    pattern: Regex,
}

impl HeaderForward {
    /// Names that `pattern` matches anywhere, ignoring case as Triton's
    /// matching does (a pattern starting `(?-i)` minds case).
    pub fn new(pattern: &str) -> Result<Self, String> {
        let pattern = RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("'{pattern}' is not a regular expression: {e}"))?;
        Ok(Self { pattern })
    }

    /// Adds each header of `headers` whose name matches to `parameters`, as
    /// a string (a value that is not UTF-8 is read lossily); a parameter the
    /// request itself sets keeps its value.
    pub fn forward<'a>(
        &self,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        parameters: &mut Parameters,
    ) {
        for (name, value) in headers {
            if self.pattern.is_match(name) {
                let value = String::from_utf8_lossy(value).into_owned();
                parameters
                    .entry(name.to_string())
                    .or_insert(ParameterValue::String(value));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(pattern: &str, headers: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut parameters = Parameters::new();
        HeaderForward::new(pattern).unwrap().forward(
            headers.iter().map(|(k, v)| (*k, v.as_bytes())),
            &mut parameters,
        );
        parameters
            .into_iter()
            .map(|(k, v)| match v {
                ParameterValue::String(s) => (k, s),
                other => panic!("a string expected, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn matching_names_become_string_parameters() {
        let headers = [
            ("my_header_1", "a"),
            ("header_2", "b"),
            ("my_header_3", "c \"q\""),
        ];
        assert_eq!(
            forwarded("my_header.*", &headers),
            [
                ("my_header_1".to_string(), "a".to_string()),
                ("my_header_3".to_string(), "c \"q\"".to_string())
            ]
        );
    }

    #[test]
    fn case_is_ignored_unless_the_pattern_asks() {
        let headers = [("my_header_1", "a")];
        assert_eq!(forwarded("MY_HEADER.*", &headers).len(), 1);
        assert!(forwarded("(?-i)MY_HEADER.*", &headers).is_empty());
    }

    #[test]
    fn the_requests_own_parameters_win() {
        let mut parameters = Parameters::new();
        parameters.insert("my_header".into(), ParameterValue::Int(1));
        HeaderForward::new("my_.*")
            .unwrap()
            .forward([("my_header", b"2".as_slice())], &mut parameters);
        assert_eq!(parameters["my_header"], ParameterValue::Int(1));
    }

    #[test]
    fn a_bad_pattern_is_an_error_naming_it() {
        let error = HeaderForward::new("(unclosed").unwrap_err();
        assert!(error.contains("'(unclosed'"), "{error}");
    }
}
