//! The AWS shared files' INI format (`~/.aws/credentials`, `~/.aws/config`):
//! `[section]` headers, `key = value` lines, `#` and `;` comments.

use std::collections::HashMap;

/// The settings of section `name` in `text`, if it has one.
pub fn section(text: &str, name: &str) -> Option<HashMap<String, String>> {
    let mut found: Option<HashMap<String, String>> = None;
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = header.split_whitespace().collect::<Vec<_>>().join(" ") == name;
            if inside {
                found.get_or_insert_with(HashMap::new);
            }
            continue;
        }
        if let (true, Some((key, value))) = (inside, line.split_once('=')) {
            found
                .get_or_insert_with(HashMap::new)
                .insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# a comment
[default]
aws_access_key_id = AKIDEFAULT
aws_secret_access_key=secret

[profile  ci]
region = eu-west-1
; another comment
AWS_SESSION_TOKEN = token=with=equals
";

    #[test]
    fn reads_one_section() {
        let default = section(FILE, "default").unwrap();
        assert_eq!(default["aws_access_key_id"], "AKIDEFAULT");
        assert_eq!(default["aws_secret_access_key"], "secret");
        assert!(!default.contains_key("region"));
    }

    #[test]
    fn headers_and_keys_are_normalized() {
        let ci = section(FILE, "profile ci").unwrap();
        assert_eq!(ci["region"], "eu-west-1");
        assert_eq!(ci["aws_session_token"], "token=with=equals");
    }

    #[test]
    fn a_missing_section_is_none() {
        assert_eq!(section(FILE, "prod"), None);
        assert_eq!(section("[empty]\n", "empty"), Some(HashMap::new()));
    }
}
