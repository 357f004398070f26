//! The server's settings: what the command line decides for the core.

use std::{path::PathBuf, sync::Arc};

use crate::cache_store::CacheStore;

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
    /// Record Triton's per-model latency summaries with these quantiles
    /// (`--metrics-config summary_latencies=true`).
    pub latency_summaries: Option<Arc<[Quantile]>>,
    /// Record Triton's first-response histogram of decoupled models
    /// (`--metrics-config histogram_latencies=true`).
    pub first_response_histogram: bool,
    /// How many models load at the same time (`--model-load-thread-count`).
    pub model_load_threads: usize,
    /// How many times a version that fails to load is tried again
    /// (`--model-load-retry-count`).
    pub model_load_retries: u32,
    /// `--model-config-name`: a model's `configs/<name>.pbtxt` is read
    /// instead of its `config.pbtxt` where it exists.
    pub model_config_name: Option<String>,
    /// `--model-namespacing`: each repository is a namespace, so models of
    /// one name in different repositories are served side by side.
    pub model_namespacing: bool,
    /// Caps on what clients can make the server hold.
    pub limits: ServerLimits,
    /// Where the response cache keeps its entries (`--cache-config`);
    /// `None`: no model is cached.
    pub response_cache: Option<Arc<dyn CacheStore>>,
    /// The rate limiter (`--rate-limit=execution_count`); `None`: off, each
    /// instance executes as soon as it has work.
    pub rate_limiter: Option<RateLimiterSettings>,
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

/// A quantile to estimate and the rank error allowed (`0.9` within `0.01`:
/// an estimate between the 89th and the 91st percentile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantile {
    pub quantile: f64,
    pub error: f64,
}

/// Triton's default summary quantiles.
pub const DEFAULT_QUANTILES: [Quantile; 5] = [
    Quantile {
        quantile: 0.5,
        error: 0.05,
    },
    Quantile {
        quantile: 0.9,
        error: 0.01,
    },
    Quantile {
        quantile: 0.95,
        error: 0.001,
    },
    Quantile {
        quantile: 0.99,
        error: 0.001,
    },
    Quantile {
        quantile: 0.999,
        error: 0.001,
    },
];

/// The rate limiter's settings (`--rate-limit-resource`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimiterSettings {
    /// The resource counts given; without any, each resource counts the
    /// largest number any one instance needs.
    pub resources: Vec<ResourceCount>,
}

/// How many units of a resource there are (`<name>:<count>[:<device>]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceCount {
    pub name: String,
    pub count: u64,
    /// The device it applies to; `None`: each device (global resources
    /// ignore it).
    pub device: Option<i32>,
}
