//! The backend's settings: `--backend-config=onnxruntime,<key>=<value>`, and
//! the global `--backend-config=default-max-batch-size=<n>`.

use std::path::PathBuf;

use oxiserve_types::{Error, Result};

/// How the ONNX Runtime backend loads its library and sizes its threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnnxSettings {
    /// The library to load (`library-path`); found on its own when unset.
    pub library_path: Option<PathBuf>,
    /// One thread pool for every session (`enable-global-threadpool`).
    pub global_thread_pool: bool,
    /// The global pool's threads (`intra_op_thread_count`, `inter_op_thread_count`).
    pub intra_op_threads: Option<usize>,
    pub inter_op_threads: Option<usize>,
    /// The `max_batch_size` auto-complete gives a model that can batch
    /// (`default-max-batch-size`, 4 as in Triton).
    pub default_max_batch_size: i32,
}

impl Default for OnnxSettings {
    fn default() -> Self {
        Self {
            library_path: None,
            global_thread_pool: false,
            intra_op_threads: None,
            inter_op_threads: None,
            default_max_batch_size: 4,
        }
    }
}

impl OnnxSettings {
    /// Reads `(key, value)` pairs given for the `onnxruntime` backend or for
    /// every backend.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut settings = Self::default();
        for (key, value) in pairs {
            let number = || {
                value.parse::<usize>().map_err(|_| {
                    Error::invalid_arg(format!(
                        "--backend-config=onnxruntime,{key}={value}: '{value}' is not a whole number"
                    ))
                })
            };
            match key {
                "library-path" => settings.library_path = Some(PathBuf::from(value)),
                "enable-global-threadpool" => {
                    settings.global_thread_pool = matches!(value, "1" | "true" | "True" | "on")
                }
                "intra_op_thread_count" => settings.intra_op_threads = Some(number()?),
                "inter_op_thread_count" => settings.inter_op_threads = Some(number()?),
                "default-max-batch-size" => {
                    settings.default_max_batch_size = i32::try_from(number()?).unwrap_or(i32::MAX)
                }
                _ => log::warn!("onnxruntime backend: unknown setting '{key}' ignored"),
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
        let s = OnnxSettings::from_pairs([
            ("library-path", "/opt/ort/libonnxruntime.so"),
            ("enable-global-threadpool", "1"),
            ("intra_op_thread_count", "2"),
            ("default-max-batch-size", "8"),
        ])
        .unwrap();
        assert_eq!(
            s.library_path,
            Some(PathBuf::from("/opt/ort/libonnxruntime.so"))
        );
        assert!(s.global_thread_pool);
        assert_eq!(s.intra_op_threads, Some(2));
        assert_eq!(s.inter_op_threads, None);
        assert_eq!(s.default_max_batch_size, 8);
    }

    #[test]
    fn refuses_a_bad_number() {
        let error = OnnxSettings::from_pairs([("intra_op_thread_count", "many")]).unwrap_err();
        assert!(
            error.message.contains("'many' is not a whole number"),
            "{}",
            error.message
        );
    }
}
