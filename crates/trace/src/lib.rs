//! Triton's request tracing (`--trace-config`, the trace extension).
//!
//! The [`TraceManager`] holds the global and per-model settings and samples
//! requests: a sampled request gets a [`Trace`], on which the frontend and
//! the core report the request's [`Activity`] timestamps and tensors, and
//! from which ensemble steps and BLS calls get child traces. When the last
//! handle of a request's trace is gone, its records go out: in Triton mode
//! into the trace file (Triton's JSON), in OpenTelemetry mode as spans to
//! an OTLP/HTTP collector.

mod activity;
mod clock;
mod config;
mod file;
mod level;
mod manager;
mod otel;
mod record;
mod sampler;
pub mod setting_text;
mod settings;
mod tensor_text;
mod trace;
mod triton_json;

pub use activity::{Activity, TensorActivity};
pub use config::{OpenTelemetryConfig, TraceConfig};
pub use level::TraceLevel;
pub use manager::TraceManager;
pub use settings::{Change, SettingsUpdate, TraceMode, TraceSettings};
pub use trace::Trace;
