//! The model's `parameters` that Triton's OpenVINO backend reads: OpenVINO
//! properties set on the device before compiling, and the backend's own
//! switches. Values are read case-insensitively, as Triton does.

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, ErrorKind, Result};

/// What a model's parameters ask of the backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelParameters {
    /// OpenVINO properties, as (key, value) strings, set on `device`.
    pub properties: Vec<(&'static str, String)>,
    /// The OpenVINO device (`TARGET_DEVICE`, `CPU` by default).
    pub device: String,
    /// `SKIP_OV_DYNAMIC_BATCHSIZE: YES`: the batch dimension is fixed to
    /// `max_batch_size` instead of dynamic.
    pub fixed_batch: bool,
    /// `ENABLE_BATCH_PADDING: YES`: with a fixed batch, smaller batches are
    /// padded with zeros instead of refused.
    pub batch_padding: bool,
    /// `RESHAPE_IO_LAYERS: YES`: inputs are reshaped to the configured dims.
    pub reshape_io: bool,
}

impl ModelParameters {
    /// Reads and checks the parameters of `config`.
    pub(crate) fn of(config: &ModelConfig) -> Result<Self> {
        let model = &config.name;
        let value = |key: &str| {
            config
                .parameters
                .get(key)
                .map(|p| p.string_value.trim().to_ascii_lowercase())
                .filter(|v| !v.is_empty())
        };
        let yes = |key: &str| value(key).is_some_and(|v| v == "yes");
        if value("CPU_EXTENSION_PATH").is_some() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "unable to load model '{model}': the parameter 'CPU_EXTENSION_PATH' (custom \
                     CPU layers) is not supported by oxiserve's openvino backend"
                ),
            ));
        }
        let mut properties = Vec::new();
        for (parameter, property) in [
            ("INFERENCE_NUM_THREADS", "INFERENCE_NUM_THREADS"),
            ("COMPILATION_NUM_THREADS", "COMPILATION_NUM_THREADS"),
            ("HINT_BF16", "INFERENCE_PRECISION_HINT"),
            ("NUM_STREAMS", "NUM_STREAMS"),
            ("PERFORMANCE_HINT", "PERFORMANCE_HINT"),
        ] {
            if let Some(v) = value(parameter) {
                let converted = property_value(parameter, &v).ok_or_else(|| {
                    Error::invalid_arg(format!(
                        "unable to load model '{model}': expected the parameter '{parameter}' to \
                         be {}, got {v}",
                        expected(parameter)
                    ))
                })?;
                properties.push((property, converted));
            }
        }
        Ok(Self {
            properties,
            device: value("TARGET_DEVICE").map_or_else(|| "CPU".into(), |d| d.to_ascii_uppercase()),
            fixed_batch: yes("SKIP_OV_DYNAMIC_BATCHSIZE"),
            batch_padding: yes("ENABLE_BATCH_PADDING"),
            reshape_io: yes("RESHAPE_IO_LAYERS"),
        })
    }
}

/// The OpenVINO property value of a (lower-cased) parameter value, or
/// `None` when it is not one the parameter takes.
fn property_value(parameter: &str, value: &str) -> Option<String> {
    let number = || value.parse::<u32>().ok().map(|n| n.to_string());
    match parameter {
        "INFERENCE_NUM_THREADS" | "COMPILATION_NUM_THREADS" => number(),
        "HINT_BF16" => (value == "yes").then(|| "bf16".into()),
        "NUM_STREAMS" => match value {
            "auto" | "numa" => Some(value.to_ascii_uppercase()),
            _ => number(),
        },
        "PERFORMANCE_HINT" => matches!(value, "latency" | "throughput" | "cumulative_throughput")
            .then(|| value.to_ascii_uppercase()),
        _ => None,
    }
}

/// What a parameter takes, in Triton's words.
fn expected(parameter: &str) -> &'static str {
    match parameter {
        "HINT_BF16" => "YES",
        "NUM_STREAMS" => "either AUTO/NUMA/<int_value>",
        "PERFORMANCE_HINT" => "LATENCY/THROUGHPUT/CUMULATIVE_THROUGHPUT",
        _ => "a non-negative number",
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::testing::config_with_parameters;

    use super::*;

    fn config(pairs: &[(&str, &str)]) -> ModelConfig {
        config_with_parameters("m", pairs)
    }

    #[test]
    fn reads_triton_parameters() {
        let p = ModelParameters::of(&config(&[
            ("NUM_STREAMS", "auto"),
            ("PERFORMANCE_HINT", "Throughput"),
            ("INFERENCE_NUM_THREADS", "2"),
            ("HINT_BF16", "YES"),
            ("SKIP_OV_DYNAMIC_BATCHSIZE", "yes"),
            ("ENABLE_BATCH_PADDING", "YES"),
            ("RESHAPE_IO_LAYERS", "no"),
        ]))
        .unwrap();
        assert_eq!(
            p.properties,
            vec![
                ("INFERENCE_NUM_THREADS", "2".to_string()),
                ("INFERENCE_PRECISION_HINT", "bf16".to_string()),
                ("NUM_STREAMS", "AUTO".to_string()),
                ("PERFORMANCE_HINT", "THROUGHPUT".to_string()),
            ]
        );
        assert_eq!(p.device, "CPU");
        assert!(p.fixed_batch && p.batch_padding && !p.reshape_io);
    }

    #[test]
    fn refuses_a_bad_value_naming_model_and_parameter() {
        let error = ModelParameters::of(&config(&[("PERFORMANCE_HINT", "fast")])).unwrap_err();
        assert_eq!(
            error.message,
            "unable to load model 'm': expected the parameter 'PERFORMANCE_HINT' to be \
             LATENCY/THROUGHPUT/CUMULATIVE_THROUGHPUT, got fast"
        );
        let error = ModelParameters::of(&config(&[("NUM_STREAMS", "-3")])).unwrap_err();
        assert!(
            error
                .message
                .contains("either AUTO/NUMA/<int_value>, got -3"),
            "{}",
            error.message
        );
    }

    #[test]
    fn refuses_cpu_extensions() {
        let error =
            ModelParameters::of(&config(&[("CPU_EXTENSION_PATH", "/x/libext.so")])).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unsupported);
    }
}
