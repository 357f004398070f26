//! Typed values of `tritonserver` flags and the parsers that read them.

use std::fmt;
use std::str::FromStr;

use clap::ValueEnum;
use oxiserve_core::RestrictedCategory;

/// Reads a boolean flag value the way `tritonserver` does, plus `yes`/`no`:
/// `true`/`false`, `1`/`0`, `on`/`off`, `yes`/`no`, in any case.
pub(crate) fn parse_bool(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err("expected a boolean: true/false, 1/0, on/off or yes/no".to_string()),
    }
}

/// Reads `--log-verbose`: a level, or `true`/`false` for 1/0 (as `tritonserver`).
pub(crate) fn parse_log_verbose(text: &str) -> Result<u32, String> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(1),
        "false" => Ok(0),
        _ => text
            .parse()
            .map_err(|_| "expected a verbose level (0, 1, 2, ...) or true/false".to_string()),
    }
}

/// How the model repository is managed (`--model-control-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelControlMode {
    /// Load every model at start-up; never change them afterwards.
    None,
    /// Poll the repositories and load/unload models as they change.
    Poll,
    /// Load and unload only through the model control API (and `--load-model`).
    Explicit,
}

impl ModelControlMode {
    /// Triton's name for the mode in the start-up options table, e.g. `MODE_POLL`.
    pub fn table_name(self) -> &'static str {
        match self {
            Self::None => "MODE_NONE",
            Self::Poll => "MODE_POLL",
            Self::Explicit => "MODE_EXPLICIT",
        }
    }
}

/// Log line format (`--log-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `LMMDD hh:mm:ss.ssssss`: severity letter then timestamp.
    Default,
    /// `YYYY-MM-DDThh:mm:ssZ L`.
    #[value(name = "ISO8601")]
    Iso8601,
}

/// Compression of gRPC inference responses (`--grpc-infer-response-compression-level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GrpcCompressionLevel {
    /// No compression.
    None,
    /// Low compression.
    Low,
    /// Medium compression.
    Medium,
    /// High compression.
    High,
}

/// Rate limiter mode (`--rate-limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum RateLimitMode {
    /// Run each inference as soon as an instance is ready.
    Off,
    /// Pick instances by priority and use count, waiting for resources.
    ExecutionCount,
}

impl RateLimitMode {
    /// Triton's name for the mode in the start-up options table.
    pub fn table_name(self) -> &'static str {
        match self {
            Self::Off => "OFF",
            Self::ExecutionCount => "EXEC_COUNT",
        }
    }
}

/// What a trace records (`--trace-level`, repeatable; Triton's aliases accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceLevel {
    /// Tracing disabled.
    #[value(alias = "false")]
    Off,
    /// Timestamps of each stage.
    #[value(aliases = ["true", "on", "min", "max"])]
    Timestamps,
    /// Input and output tensors.
    Tensors,
}

/// Splits `<scope><separator><setting>=<value>` (the scope ends at the first
/// `separator` before the first `=`); without a separator there, the whole
/// left side is the setting if `scope_optional`, else it is an error.
fn split_setting(
    text: &str,
    separator: char,
    scope_optional: bool,
    form: &str,
) -> Result<(Option<String>, String, String), String> {
    let bad = || format!("expected {form}, got '{text}'");
    let (left, value) = text.split_once('=').ok_or_else(bad)?;
    let (scope, setting) = match left.split_once(separator) {
        Some((scope, setting)) => (Some(scope), setting),
        None if scope_optional => (None, left),
        None => return Err(bad()),
    };
    if scope == Some("") || setting.is_empty() || value.is_empty() {
        return Err(bad());
    }
    Ok((
        scope.map(str::to_string),
        setting.to_string(),
        value.to_string(),
    ))
}

/// One `--backend-config` setting: `<backend>,<setting>=<value>`, or
/// `<setting>=<value>` for a setting that applies to every backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendConfig {
    /// The backend, e.g. `python`; `None` for a global setting.
    pub backend: Option<String>,
    /// Setting name, e.g. `shm-default-byte-size`.
    pub setting: String,
    /// Setting value, as given.
    pub value: String,
}

impl FromStr for BackendConfig {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let form = "<backend>,<setting>=<value> or <setting>=<value>";
        let (backend, setting, value) = split_setting(text, ',', true, form)?;
        Ok(Self {
            backend,
            setting,
            value,
        })
    }
}

/// Where a `--trace-config` setting applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceMode {
    /// Triton's own trace files.
    Triton,
    /// OpenTelemetry export.
    Opentelemetry,
}

/// One `--trace-config` setting: `<mode>,<setting>=<value>` or, for global
/// settings (level, rate, count, mode), `<setting>=<value>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// The trace mode the setting belongs to; `None` for a global setting.
    pub mode: Option<TraceMode>,
    /// Setting name, e.g. `rate`.
    pub setting: String,
    /// Setting value, as given.
    pub value: String,
}

impl FromStr for TraceConfig {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let form = "<mode>,<setting>=<value> or <setting>=<value>";
        let (mode, setting, value) = split_setting(text, ',', true, form)?;
        let mode = mode
            .map(|mode| TraceMode::from_str(&mode, true))
            .transpose()
            .map_err(|_| "trace mode must be 'triton' or 'opentelemetry'".to_string())?;
        Ok(Self {
            mode,
            setting,
            value,
        })
    }
}

/// A `<name>,<setting>=<value>` setting where the name is required:
/// `--cache-config` (name = cache, e.g. `local`) and `--host-policy`
/// (name = policy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedSetting {
    /// The cache or policy name.
    pub name: String,
    /// Setting name, e.g. `size` or `numa-node`.
    pub setting: String,
    /// Setting value, as given.
    pub value: String,
}

impl FromStr for NamedSetting {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (name, setting, value) = split_setting(text, ',', false, "<name>,<setting>=<value>")?;
        let name = name.unwrap_or_default();
        Ok(Self {
            name,
            setting,
            value,
        })
    }
}

/// One `--metrics-config` setting: `<setting>=<value>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsConfig {
    /// Setting name, e.g. `summary_latencies`.
    pub setting: String,
    /// Setting value, as given.
    pub value: String,
}

impl FromStr for MetricsConfig {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (setting, value) = text
            .split_once('=')
            .filter(|(setting, value)| {
                !setting.is_empty() && !value.is_empty() && !setting.contains(',')
            })
            .ok_or_else(|| format!("expected <setting>=<value>, got '{text}'"))?;
        let (setting, value) = (setting.to_string(), value.to_string());
        Ok(Self { setting, value })
    }
}

/// One restriction: `<api>[,<api>...]:<header>=<value>`; requests to these
/// APIs must carry the header with that value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestrictedApi {
    /// The restricted API groups, as named (checked after parsing, as
    /// Triton checks them: see `ServerOptions::check`).
    pub apis: Vec<String>,
    /// The header that must be present.
    pub header: String,
    /// The value the header must have.
    pub value: String,
}

impl RestrictedApi {
    /// The API groups restricted.
    pub fn categories(&self) -> Vec<RestrictedCategory> {
        self.apis
            .iter()
            .filter_map(|name| RestrictedCategory::from_name(name))
            .collect()
    }
}

impl FromStr for RestrictedApi {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (apis, header, value) = split_setting(text, ':', false, "<apis>:<header>=<value>")?;
        let apis: Vec<String> = apis
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        Ok(Self {
            apis,
            header,
            value,
        })
    }
}

/// One `--rate-limit-resource`: `<name>:<count>` or `<name>:<count>:<device>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimitResource {
    /// Resource name, as used in model configurations.
    pub name: String,
    /// How many units of the resource are available.
    pub count: u32,
    /// The device the count applies to; `None` for every device.
    pub device: Option<u32>,
}

impl FromStr for RateLimitResource {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        // Triton's words.
        let bad = || {
            format!(
                "--rate-limit-resource option format is '<resource_name>:<count>:<device>' or \
                 '<resource_name>:<count>'. Got {text}"
            )
        };
        let parts: Vec<&str> = text.split(':').collect();
        let (name, count, device) = match parts[..] {
            [name, count] => (name, count, None),
            [name, count, device] => (name, count, Some(device)),
            _ => return Err(bad()),
        };
        let number = |value: &str| {
            value
                .parse()
                .map_err(|_| format!("Invalid option value. Got {value}"))
        };
        let count = number(count)?;
        let device = device.map(number).transpose()?;
        Ok(Self {
            name: name.to_string(),
            count,
            device,
        })
    }
}

impl fmt::Display for RateLimitResource {
    /// Triton's rendering in the start-up options table (sic: no comma
    /// before "device").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let device = self.device.map_or(-1, i64::from);
        write!(
            f,
            "{{\"name\":\"{}\", \"count\":{} \"device\":{}}}",
            self.name, self.count, device
        )
    }
}

/// A per-GPU value `<device>:<value>`: CUDA memory pool sizes, CUDA virtual
/// address sizes, model load GPU limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerDevice<T> {
    /// GPU device id.
    pub device: u32,
    /// The value for that device.
    pub value: T,
}

impl<T: FromStr> FromStr for PerDevice<T> {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("expected <device>:<value>, got '{text}'");
        let (device, value) = text.split_once(':').ok_or_else(bad)?;
        let device = device.parse().map_err(|_| bad())?;
        let value = value.parse().map_err(|_| bad())?;
        Ok(Self { device, value })
    }
}

/// An inclusive port range `<first>-<last>` (`--sagemaker-safe-port-range`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    /// Lowest allowed port.
    pub first: u16,
    /// Highest allowed port.
    pub last: u16,
}

impl FromStr for PortRange {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("expected <first>-<last>, got '{text}'");
        let (first, last) = text.split_once('-').ok_or_else(bad)?;
        let first = first.parse().map_err(|_| bad())?;
        let last = last.parse().map_err(|_| bad())?;
        Ok(Self { first, last })
    }
}
