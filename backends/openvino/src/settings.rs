//! The backend's settings: `--backend-config=openvino,<key>=<value>`, and
//! the global `--backend-config=default-max-batch-size=<n>`.

use std::path::PathBuf;

use oxiserve_types::{Error, Result};

/// Where the OpenVINO backend finds its library and how it auto-completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenVinoSettings {
    /// The `libopenvino_c.so` to load (`library-path`); found on its own when unset.
    pub library_path: Option<PathBuf>,
    /// The `max_batch_size` auto-complete gives a model that can batch
    /// (`default-max-batch-size`, 4 as in Triton).
    pub default_max_batch_size: i32,
}

impl Default for OpenVinoSettings {
    fn default() -> Self {
        Self {
            library_path: None,
            default_max_batch_size: 4,
        }
    }
}

impl OpenVinoSettings {
    /// Reads `(key, value)` pairs given for the `openvino` backend or for
    /// every backend.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut settings = Self::default();
        for (key, value) in pairs {
            match key {
                "library-path" => settings.library_path = Some(PathBuf::from(value)),
                "default-max-batch-size" => {
                    let n = value.parse::<u32>().map_err(|_| {
                        Error::invalid_arg(format!(
                            "--backend-config=openvino,{key}={value}: '{value}' is not a whole number"
                        ))
                    })?;
                    settings.default_max_batch_size = i32::try_from(n).unwrap_or(i32::MAX);
                }
                _ => log::warn!("openvino backend: unknown setting '{key}' ignored"),
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_keys() {
        let s = OpenVinoSettings::from_pairs([
            ("library-path", "/opt/ov/libopenvino_c.so"),
            ("default-max-batch-size", "8"),
        ])
        .unwrap();
        assert_eq!(
            s.library_path,
            Some(PathBuf::from("/opt/ov/libopenvino_c.so"))
        );
        assert_eq!(s.default_max_batch_size, 8);
    }

    #[test]
    fn refuses_a_bad_number() {
        let error = OpenVinoSettings::from_pairs([("default-max-batch-size", "x")]).unwrap_err();
        assert!(
            error.message.contains("'x' is not a whole number"),
            "{}",
            error.message
        );
    }
}
