//! Tracing as the command line sets it up (`--trace-config` and the
//! deprecated `--trace-*` flags).

use crate::{level::TraceLevel, settings::TraceMode};

/// The start-up settings; [`TraceConfig::default`] is Triton's (tracing off).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    pub level: TraceLevel,
    pub rate: u32,
    pub count: i32,
    pub log_frequency: u32,
    pub file: String,
    pub mode: TraceMode,
    /// The mode's own settings in the order given (the OpenTelemetry
    /// batch settings' defaults after them), echoed by the settings replies.
    pub mode_options: Vec<(String, String)>,
    /// Used in OpenTelemetry mode.
    pub opentelemetry: OpenTelemetryConfig,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            level: TraceLevel::OFF,
            rate: 1000,
            count: -1,
            log_frequency: 0,
            file: String::new(),
            mode: TraceMode::Triton,
            mode_options: Vec::new(),
            opentelemetry: OpenTelemetryConfig::default(),
        }
    }
}

/// Where and how spans are exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTelemetryConfig {
    /// The OTLP/HTTP traces endpoint; without a scheme, `http://` is meant.
    pub url: String,
    /// Resource attributes after `service.name=triton-inference-server`.
    pub resource: Vec<(String, String)>,
    /// The batch span processor's `max_queue_size`.
    pub max_queue_size: u32,
    /// Milliseconds between two exports.
    pub schedule_delay_ms: u32,
    pub max_export_batch_size: u32,
}

impl Default for OpenTelemetryConfig {
    fn default() -> Self {
        Self {
            url: "http://localhost:4318/v1/traces".into(),
            resource: Vec::new(),
            max_queue_size: 2048,
            schedule_delay_ms: 5000,
            max_export_batch_size: 512,
        }
    }
}
