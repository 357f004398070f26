//! Tracing, response cache, rate limiter and memory/device flags.

use std::path::PathBuf;

use clap::Args;

use super::values::{
    NamedSetting, PerDevice, RateLimitMode, RateLimitResource, TraceConfig, TraceLevel,
};

/// Tracing flags (the `--trace-*` ones besides `--trace-config` are deprecated).
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Tracing")]
#[group(skip)]
pub struct TraceOptions {
    /// Trace setting `<mode>,<setting>=<value>` or global `<setting>=<value>`; repeatable.
    #[arg(long, value_name = "[MODE,]SETTING=VALUE")]
    pub trace_config: Vec<TraceConfig>,
    /// Deprecated: file trace output is written to.
    #[arg(long, value_name = "PATH")]
    pub trace_file: Option<PathBuf>,
    /// Deprecated: what to trace; repeatable.
    #[arg(long, value_enum, ignore_case = true, value_name = "LEVEL")]
    pub trace_level: Vec<TraceLevel>,
    /// Deprecated: trace one request in this many.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub trace_rate: u32,
    /// Deprecated: number of traces to take (-1: unlimited).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true, value_name = "N")]
    pub trace_count: i32,
    /// Deprecated: write the trace file every this many traces (0: at exit).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub trace_log_frequency: u32,
}

/// Response cache flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Response Cache")]
#[group(skip)]
pub struct CacheOptions {
    /// Cache setting `<cache>,<setting>=<value>`, e.g. `local,size=1048576`; repeatable.
    #[arg(long, value_name = "CACHE,SETTING=VALUE")]
    pub cache_config: Vec<NamedSetting>,
    /// Global directory searched for cache implementations.
    #[arg(long, default_value = "/opt/tritonserver/caches", value_name = "PATH")]
    pub cache_directory: PathBuf,
    /// Deprecated: size of the `local` cache (use --cache-config=local,size=N).
    #[arg(long, value_name = "BYTES")]
    pub response_cache_byte_size: Option<u64>,
}

impl CacheOptions {
    /// Whether a response cache is configured (Triton's `cache_enabled`).
    pub fn cache_enabled(&self) -> bool {
        !self.cache_config.is_empty() || self.response_cache_byte_size.is_some()
    }
}

/// Rate limiter flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Rate Limiter")]
#[group(skip)]
pub struct RateLimiterOptions {
    /// Rate limiting mode.
    #[arg(
        long,
        value_enum,
        default_value = "off",
        ignore_case = true,
        value_name = "MODE"
    )]
    pub rate_limit: RateLimitMode,
    /// Available resource `<name>:<count>[:<device>]`; repeatable.
    #[arg(long, value_name = "NAME:COUNT[:DEVICE]")]
    pub rate_limit_resource: Vec<RateLimitResource>,
}

/// Memory and device management flags.
#[derive(Clone, Debug, PartialEq, Args)]
#[command(next_help_heading = "Memory/Device Management")]
#[group(skip)]
pub struct MemoryOptions {
    /// Pinned system memory pool size.
    #[arg(long, default_value_t = 268_435_456, value_name = "BYTES")]
    pub pinned_memory_pool_byte_size: u64,
    /// CUDA memory pool size of a GPU `<device>:<bytes>`; repeatable, last per device wins.
    #[arg(long, value_name = "DEVICE:BYTES")]
    pub cuda_memory_pool_byte_size: Vec<PerDevice<u64>>,
    /// CUDA virtual address size per implicit state `<device>:<bytes>`; repeatable.
    #[arg(long, value_name = "DEVICE:BYTES")]
    pub cuda_virtual_address_size: Vec<PerDevice<u64>>,
    /// Minimum CUDA compute capability of the GPUs used.
    #[arg(long, default_value_t = 6.0, value_name = "FLOAT")]
    pub min_supported_compute_capability: f64,
    /// Threads that copy and manage tensor contents.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub buffer_manager_thread_count: u32,
    /// Host policy setting `<policy>,<setting>=<value>`; repeatable.
    #[arg(long, value_name = "POLICY,SETTING=VALUE")]
    pub host_policy: Vec<NamedSetting>,
    /// Refuse model loads on a GPU whose memory use exceeds a fraction `<device>:<fraction>`; repeatable.
    #[arg(long, value_name = "DEVICE:FRACTION")]
    pub model_load_gpu_limit: Vec<PerDevice<f64>>,
    /// System shared memory regions registered at once (beyond Triton).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub shared_memory_region_limit: usize,
    /// Requests waiting in one model's queue before more are refused with
    /// UNAVAILABLE at once; 0 for no limit (beyond Triton).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub model_queue_limit: usize,
}
