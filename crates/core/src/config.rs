//! The server's settings: what the command line decides for the core.

use std::path::PathBuf;

/// How the server manages its model repository (`--model-control-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModelControlMode {
    /// Load everything at start-up; refuse load and unload requests.
    #[default]
    None,
    /// Like `None`, and rescan periodically.
    Poll,
    /// Load only what is asked for, at start-up and through the API.
    Explicit,
}

/// The server's settings.
#[derive(Debug, Clone, Default)]
pub struct ServerConfig {
    /// The server's name in its metadata (`--id`, "triton" by default).
    pub id: String,
    pub repositories: Vec<PathBuf>,
    pub control_mode: ModelControlMode,
    /// `--load-model` names for explicit mode (`*` = all).
    pub startup_models: Vec<String>,
    /// `--strict-model-config=false` allows configurations to be completed.
    pub auto_complete: bool,
    /// Ready only while every model is ready (`--strict-readiness`).
    pub strict_readiness: bool,
    /// GPU ids this server can use.
    pub gpus: Vec<i32>,
    /// Record per-model latency histograms (atomics, no lock) for metrics.
    pub latency_histograms: bool,
    /// How many models load at the same time (`--model-load-thread-count`).
    pub model_load_threads: usize,
    /// How many times a version that fails to load is tried again
    /// (`--model-load-retry-count`).
    pub model_load_retries: u32,
    /// `--model-config-name`: a model's `configs/<name>.pbtxt` is read
    /// instead of its `config.pbtxt` where it exists.
    pub model_config_name: Option<String>,
    /// Caps on what clients can make the server hold.
    pub limits: ServerLimits,
}

/// Caps on what clients can make the server hold, each with a default an
/// ordinary deployment never meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// System shared memory regions registered at once
    /// (`--shared-memory-region-limit`).
    pub shared_memory_regions: usize,
    /// Requests waiting in one model's queue before more are refused with
    /// UNAVAILABLE (`--model-queue-limit`; 0: no limit). A config's own
    /// `max_queue_size` applies as well.
    pub model_queue: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            shared_memory_regions: crate::shared_memory::DEFAULT_MAX_REGIONS,
            model_queue: 10_000,
        }
    }
}
