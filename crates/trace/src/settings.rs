//! The trace settings the trace extension reads and changes, globally and
//! per model.

use oxiserve_types::Result;

use crate::level::TraceLevel;

/// Which trace API records: Triton's trace files or OpenTelemetry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TraceMode {
    #[default]
    Triton,
    OpenTelemetry,
}

impl TraceMode {
    /// `triton` or `opentelemetry`, as the replies name it.
    pub fn name(self) -> &'static str {
        match self {
            TraceMode::Triton => "triton",
            TraceMode::OpenTelemetry => "opentelemetry",
        }
    }
}

/// The settings in force for the server or one model, as Triton reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSettings {
    pub level: TraceLevel,
    /// One request in this many is traced.
    pub rate: u32,
    /// Traces still to take; -1 for no limit.
    pub count: i32,
    /// Write the trace file every this many traces (0: when the setting
    /// changes, and at exit).
    pub log_frequency: u32,
    pub file: String,
    pub mode: TraceMode,
    /// The mode's own `--trace-config <mode>,<setting>=<value>` settings,
    /// which the replies echo (a key may repeat).
    pub mode_options: Vec<(String, String)>,
}

/// What to do with one setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Change<T> {
    /// Leave it as it is.
    #[default]
    Keep,
    /// Give it this value.
    Set(T),
    /// Go back to the value it falls back on: a model's to the global
    /// one, the global one to the command line's.
    Clear,
}

impl<T> Change<T> {
    /// A request's text for a setting: none clears it, else `parse` reads
    /// the value to set.
    pub fn from_text(text: Option<&str>, parse: impl FnOnce(&str) -> Result<T>) -> Result<Self> {
        text.map_or(Ok(Change::Clear), |text| parse(text).map(Change::Set))
    }
}

/// A change of settings (`POST .../trace/setting`, gRPC `TraceSetting`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SettingsUpdate {
    pub level: Change<TraceLevel>,
    pub rate: Change<u32>,
    pub count: Change<i32>,
    pub log_frequency: Change<u32>,
}

impl TraceSettings {
    /// The settings as Triton's replies list them, in its order:
    /// `trace_level` (its names), `trace_rate`, `trace_count`, in Triton
    /// mode `log_frequency` and `trace_file`, `trace_mode`, then the mode's
    /// own options but `file` and `log-frequency` (a key may repeat).
    pub fn reply(&self) -> Vec<(String, Vec<String>)> {
        let one = |key: &str, value: String| (key.to_string(), vec![value]);
        let level = self.level.names().into_iter().map(String::from).collect();
        let mut entries = vec![
            ("trace_level".to_string(), level),
            one("trace_rate", self.rate.to_string()),
            one("trace_count", self.count.to_string()),
        ];
        if self.mode == TraceMode::Triton {
            entries.push(one("log_frequency", self.log_frequency.to_string()));
            entries.push(one("trace_file", self.file.clone()));
        }
        entries.push(one("trace_mode", self.mode.name().to_string()));
        for (key, value) in &self.mode_options {
            if key != "file" && key != "log-frequency" {
                entries.push(one(key, value.clone()));
            }
        }
        entries
    }
}
