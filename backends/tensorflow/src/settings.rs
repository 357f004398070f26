//! The backend's settings: `--backend-config=tensorflow,<key>=<value>`, and
//! the global `--backend-config=default-max-batch-size=<n>`.

use std::path::PathBuf;

use oxiserve_types::{Error, Result};

/// How the TensorFlow backend finds its library and configures sessions.
#[derive(Debug, Clone, PartialEq)]
pub struct TfSettings {
    /// The library to open (`library-path`); found on its own when unset.
    pub library_path: Option<PathBuf>,
    /// Run an operation on the CPU when it has no kernel for the requested
    /// device (`allow-soft-placement`, on by default as in Triton).
    pub allow_soft_placement: bool,
    /// The `max_batch_size` auto-complete gives a model that can batch
    /// (`default-max-batch-size`, 4 as in Triton).
    pub default_max_batch_size: i32,
}

impl Default for TfSettings {
    fn default() -> Self {
        Self {
            library_path: None,
            allow_soft_placement: true,
            default_max_batch_size: 4,
        }
    }
}

impl TfSettings {
    /// Reads `(key, value)` pairs given for the `tensorflow` backend or for
    /// every backend.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut settings = Self::default();
        for (key, value) in pairs {
            let bad = |what: &str| {
                Error::invalid_arg(format!(
                    "--backend-config=tensorflow,{key}={value}: '{value}' is not {what}"
                ))
            };
            match key {
                "library-path" => settings.library_path = Some(PathBuf::from(value)),
                "allow-soft-placement" => {
                    settings.allow_soft_placement =
                        parse_bool(value).ok_or_else(|| bad("a boolean"))?
                }
                "default-max-batch-size" => {
                    let n: u32 = value.parse().map_err(|_| bad("a whole number"))?;
                    settings.default_max_batch_size = i32::try_from(n).unwrap_or(i32::MAX);
                }
                "version" if value != "2" => {
                    return Err(Error::invalid_arg(format!(
                        "--backend-config=tensorflow,version={value}: only TensorFlow 2 is supported"
                    )));
                }
                "version" => {}
                "gpu-memory-fraction" | "memory-limit" => log::warn!(
                    "tensorflow backend: '{key}' applies to GPUs; this CPU backend ignores it"
                ),
                _ => log::warn!("tensorflow backend: unknown setting '{key}' ignored"),
            }
        }
        Ok(settings)
    }
}

/// Triton's booleans: `true`/`1`/`on` and `false`/`0`/`off`, any case.
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Some(true),
        "false" | "0" | "off" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_keys() {
        let s = TfSettings::from_pairs([
            ("library-path", "/opt/tf/libtensorflow_cc.so.2"),
            ("allow-soft-placement", "false"),
            ("default-max-batch-size", "8"),
            ("version", "2"),
            ("gpu-memory-fraction", "0.5"),
        ])
        .unwrap();
        assert_eq!(
            s.library_path,
            Some(PathBuf::from("/opt/tf/libtensorflow_cc.so.2"))
        );
        assert!(!s.allow_soft_placement);
        assert_eq!(s.default_max_batch_size, 8);
    }

    #[test]
    fn refuses_bad_values() {
        for (pair, needle) in [
            (
                ("default-max-batch-size", "many"),
                "'many' is not a whole number",
            ),
            (
                ("allow-soft-placement", "maybe"),
                "'maybe' is not a boolean",
            ),
            (("version", "1"), "only TensorFlow 2 is supported"),
        ] {
            let error = TfSettings::from_pairs([pair]).unwrap_err();
            assert!(error.message.contains(needle), "{}", error.message);
        }
    }
}
