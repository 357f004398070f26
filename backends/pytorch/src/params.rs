//! Triton's PyTorch parameters from `config.pbtxt`: `INFERENCE_MODE`,
//! `DISABLE_OPTIMIZED_EXECUTION`, `INTRA_OP_THREAD_COUNT`,
//! `INTER_OP_THREAD_COUNT`, `ENABLE_CACHE_CLEANING`.

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

/// How a model's instances run forward().
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunParams {
    /// Whether TorchScript's graph executor optimizes (Triton's default).
    pub optimized_execution: bool,
    /// Intra-op threads of each instance's thread: 1 unless
    /// `INTRA_OP_THREAD_COUNT` says otherwise, so instances scale across cores.
    pub intra_op_threads: usize,
    /// The process-wide inter-op pool's size, set once (`INTER_OP_THREAD_COUNT`).
    pub inter_op_threads: Option<usize>,
}

impl RunParams {
    /// Reads the parameters; `INFERENCE_MODE` and `ENABLE_CACHE_CLEANING`
    /// are checked but change nothing: forward() always runs without
    /// gradients, and CPU instances have no CUDA cache to clean.
    pub(crate) fn from_config(config: &ModelConfig) -> Result<Self> {
        let flag = |key| flag(config, key);
        flag("INFERENCE_MODE")?;
        flag("ENABLE_CACHE_CLEANING")?;
        Ok(Self {
            optimized_execution: !flag("DISABLE_OPTIMIZED_EXECUTION")?.unwrap_or(false),
            intra_op_threads: count(config, "INTRA_OP_THREAD_COUNT")?.unwrap_or(1),
            inter_op_threads: count(config, "INTER_OP_THREAD_COUNT")?,
        })
    }
}

fn text<'a>(config: &'a ModelConfig, key: &str) -> Option<&'a str> {
    config.parameters.get(key).map(|p| p.string_value.trim())
}

fn flag(config: &ModelConfig, key: &str) -> Result<Option<bool>> {
    let Some(value) = text(config, key) else {
        return Ok(None);
    };
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(Some(true)),
        "false" | "0" | "off" | "no" => Ok(Some(false)),
        _ => Err(Error::invalid_arg(format!(
            "model '{}': parameter '{key}' must be true or false, got '{value}'",
            config.name
        ))),
    }
}

/// A thread count; 0 or less leaves the default, as in Triton.
fn count(config: &ModelConfig, key: &str) -> Result<Option<usize>> {
    let Some(value) = text(config, key) else {
        return Ok(None);
    };
    let number: i64 = value.parse().map_err(|_| {
        Error::invalid_arg(format!(
            "model '{}': parameter '{key}' must be a whole number, got '{value}'",
            config.name
        ))
    })?;
    Ok(usize::try_from(number).ok().filter(|&n| n > 0))
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelParameter;

    use super::*;

    fn config(pairs: &[(&str, &str)]) -> ModelConfig {
        let mut config = ModelConfig {
            name: "m".into(),
            ..Default::default()
        };
        for (key, value) in pairs {
            config.parameters.insert(
                key.to_string(),
                ModelParameter {
                    string_value: value.to_string(),
                },
            );
        }
        config
    }

    #[test]
    fn defaults_to_one_thread_and_optimized_execution() {
        let p = RunParams::from_config(&config(&[])).unwrap();
        assert_eq!(
            p,
            RunParams {
                optimized_execution: true,
                intra_op_threads: 1,
                inter_op_threads: None
            }
        );
    }

    #[test]
    fn reads_tritons_parameters() {
        let p = RunParams::from_config(&config(&[
            ("DISABLE_OPTIMIZED_EXECUTION", "true"),
            ("INTRA_OP_THREAD_COUNT", "4"),
            ("INTER_OP_THREAD_COUNT", "2"),
            ("INFERENCE_MODE", "false"),
        ]))
        .unwrap();
        assert!(!p.optimized_execution);
        assert_eq!(p.intra_op_threads, 4);
        assert_eq!(p.inter_op_threads, Some(2));
    }

    #[test]
    fn refuses_bad_values() {
        let e = RunParams::from_config(&config(&[("INFERENCE_MODE", "maybe")])).unwrap_err();
        assert!(e.message.contains("must be true or false"), "{}", e.message);
        let e = RunParams::from_config(&config(&[("INTRA_OP_THREAD_COUNT", "x")])).unwrap_err();
        assert!(e.message.contains("whole number"), "{}", e.message);
    }
}
