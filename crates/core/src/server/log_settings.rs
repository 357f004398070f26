//! The server's log settings, readable and changeable at run time through
//! the logging extension (`/v2/logging`, gRPC `LogSettings`).

use oxiserve_types::Result;

/// Log settings as Triton reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// The log file; empty for the console.
    pub log_file: String,
    pub log_info: bool,
    pub log_warning: bool,
    pub log_error: bool,
    pub log_verbose_level: u32,
    /// `default` or `ISO8601`.
    pub log_format: String,
}

/// Changes to apply; `None` keeps a setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSettingsUpdate {
    pub log_file: Option<String>,
    pub log_info: Option<bool>,
    pub log_warning: Option<bool>,
    pub log_error: Option<bool>,
    pub log_verbose_level: Option<u32>,
    pub log_format: Option<String>,
}

/// Whoever owns the process's logger (the binary) implements this.
pub trait LogControl: Send + Sync + std::fmt::Debug {
    /// The settings in force.
    fn settings(&self) -> LogSettings;

    /// Applies `update`; returns the settings in force afterwards.
    fn update(&self, update: LogSettingsUpdate) -> Result<LogSettings>;
}
