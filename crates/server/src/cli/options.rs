//! `ServerOptions`: every `tritonserver` flag, grouped as in its `--help`,
//! with Triton 2.51's defaults. Field names are the flag names.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{ArgAction, Args};

use super::endpoints::{
    GrpcOptions, HttpOptions, MetricsOptions, SagemakerOptions, VertexAiOptions,
};
use super::resources::{CacheOptions, MemoryOptions, RateLimiterOptions, TraceOptions};
use super::values::{BackendConfig, LogFormat, ModelControlMode, parse_bool, parse_log_verbose};

/// The options of `oxiserve` (serve), as parsed from `tritonserver`'s flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Server")]
#[group(skip)]
pub struct ServerOptions {
    /// Identifier for this server.
    #[arg(long, default_value = "triton")]
    pub id: String,
    /// Seconds to wait for in-flight inferences when exiting before exiting anyway.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub exit_timeout_secs: u32,
    /// Run the server's own threads under Linux's SCHED_BATCH policy, so that
    /// their wake-ups do not preempt the processes of Python models (false:
    /// SCHED_OTHER, as started).
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub batch_scheduling: bool,
    /// Logging.
    #[command(flatten)]
    pub logging: LoggingOptions,
    /// Model repositories and model management.
    #[command(flatten)]
    pub repository: RepositoryOptions,
    /// HTTP/REST endpoint.
    #[command(flatten)]
    pub http: HttpOptions,
    /// gRPC endpoint.
    #[command(flatten)]
    pub grpc: GrpcOptions,
    /// SageMaker endpoint.
    #[command(flatten)]
    pub sagemaker: SagemakerOptions,
    /// Vertex AI endpoint.
    #[command(flatten)]
    pub vertex_ai: VertexAiOptions,
    /// Prometheus metrics endpoint.
    #[command(flatten)]
    pub metrics: MetricsOptions,
    /// Request tracing.
    #[command(flatten)]
    pub trace: TraceOptions,
    /// Backends and repository agents.
    #[command(flatten)]
    pub backend: BackendOptions,
    /// Response cache.
    #[command(flatten)]
    pub cache: CacheOptions,
    /// Rate limiter.
    #[command(flatten)]
    pub rate_limiter: RateLimiterOptions,
    /// Memory and device management.
    #[command(flatten)]
    pub memory: MemoryOptions,
    /// Long names of the flags given on the command line (not defaulted).
    #[arg(skip)]
    pub(super) passed: BTreeSet<String>,
}

impl ServerOptions {
    /// Whether `--<flag>` was given on the command line (rather than defaulted).
    pub fn was_passed(&self, flag: &str) -> bool {
        self.passed.contains(flag)
    }
}

/// Logging flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Logging")]
#[group(skip)]
pub struct LoggingOptions {
    /// Verbose logging level; 0 disables verbose logging (true/false mean 1/0).
    #[arg(long, default_value = "0", value_parser = parse_log_verbose, value_name = "LEVEL")]
    pub log_verbose: u32,
    /// Enable info-level logging.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub log_info: bool,
    /// Enable warning-level logging.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub log_warning: bool,
    /// Enable error-level logging.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub log_error: bool,
    /// Log line format.
    #[arg(
        long,
        value_enum,
        default_value = "default",
        ignore_case = true,
        value_name = "FORMAT"
    )]
    pub log_format: LogFormat,
    /// Write logs to this file instead of the console.
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,
}

impl LoggingOptions {
    /// Whether records at `level` are logged: error, warn and info follow
    /// `--log-error`, `--log-warning` and `--log-info`; debug needs
    /// `--log-verbose` >= 1 and trace >= 2.
    pub fn enabled(&self, level: log::Level) -> bool {
        match level {
            log::Level::Error => self.log_error,
            log::Level::Warn => self.log_warning,
            log::Level::Info => self.log_info,
            log::Level::Debug => self.log_verbose >= 1,
            log::Level::Trace => self.log_verbose >= 2,
        }
    }

    /// The most detailed enabled level, for `log::set_max_level`.
    pub fn max_level(&self) -> log::LevelFilter {
        log::Level::iter()
            .filter(|level| self.enabled(*level))
            .map(|level| level.to_level_filter())
            .max()
            .unwrap_or(log::LevelFilter::Off)
    }
}

/// Model repository flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Model Repository")]
#[group(skip)]
pub struct RepositoryOptions {
    /// Model repository directory; repeat for several. Sorted, duplicates removed.
    #[arg(long, visible_alias = "model-store", value_name = "PATH")]
    pub model_repository: Vec<PathBuf>,
    /// Exit if an error occurs during initialization.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub exit_on_error: bool,
    /// Do not auto-complete model configurations: every config.pbtxt must be complete.
    #[arg(long)]
    pub disable_auto_complete_config: bool,
    /// Ready (/v2/health/ready) only when all models are ready, not just the server.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub strict_readiness: bool,
    /// How models are loaded and unloaded.
    #[arg(
        long,
        value_enum,
        default_value = "none",
        ignore_case = true,
        value_name = "MODE"
    )]
    pub model_control_mode: ModelControlMode,
    /// Seconds between repository polls (poll mode only).
    #[arg(long, default_value_t = 15, value_name = "SECS")]
    pub repository_poll_secs: u32,
    /// Model to load at start-up (explicit mode); repeat for several, `*` for all.
    /// Sorted, duplicates removed.
    #[arg(long, value_name = "MODEL")]
    pub load_model: Vec<String>,
    /// Load `configs/<name>.pbtxt` instead of config.pbtxt where present.
    #[arg(long, value_name = "NAME")]
    pub model_config_name: Option<String>,
    /// Threads loading models concurrently (0 acts as 1).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub model_load_thread_count: u32,
    /// Times a failed model load is retried.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub model_load_retry_count: u32,
    /// Allow models with the same name in different repositories (namespaces).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub model_namespacing: bool,
    /// Try to enable peer access between GPUs.
    #[arg(long, default_value = "true", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub enable_peer_access: bool,
    /// Deprecated: require complete model configurations (see
    /// --disable-auto-complete-config, which forces this to true).
    #[arg(long, default_value = "false", value_parser = parse_bool, action = ArgAction::Set, value_name = "BOOL")]
    pub strict_model_config: bool,
}

/// Backend and repository agent flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Backend")]
#[group(skip)]
pub struct BackendOptions {
    /// Global directory searched for backends.
    #[arg(
        long,
        default_value = "/opt/tritonserver/backends",
        value_name = "PATH"
    )]
    pub backend_directory: PathBuf,
    /// Backend setting `<backend>,<setting>=<value>` (or global `<setting>=<value>`); repeatable.
    #[arg(long, value_name = "[BACKEND,]SETTING=VALUE")]
    pub backend_config: Vec<BackendConfig>,
    /// Global directory searched for repository agents.
    #[arg(
        long,
        default_value = "/opt/tritonserver/repoagents",
        value_name = "PATH",
        help_heading = "Repository Agent"
    )]
    pub repoagent_directory: PathBuf,
}
