//! The oxiserve core: the model repository, loaded models and their
//! lifecycle, schedulers and instance runners, request validation and
//! statistics. It knows no HTTP or gRPC: frontends call [`Server`], which
//! hands model requests to the [`ModelManager`].

mod backends;
mod cache;
mod cache_store;
mod config;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod header_forward;
mod infer;
mod manager;
mod model;
mod rate_limiter;
pub mod repository;
mod restriction;
mod scheduler;
mod server;
mod shared_memory;
mod stats;
mod warmup;

pub use backends::BackendRegistry;
pub use cache::LocalCache;
pub use cache_store::{CacheStore, Inserted};
pub use config::{
    DEFAULT_QUANTILES, ModelControlMode, Quantile, RateLimiterSettings, ResourceCount,
    ServerConfig, ServerLimits,
};
pub use header_forward::HeaderForward;
pub use infer::{ResponseStream, StreamEvent};
pub use manager::{InFlight, IndexEntry, ModelManager, Poller, RepositorySync, StartUpLoad};
pub use model::{LoadedModel, ModelMetadata, ModelState, TensorMetadata, VersionStatus};
pub use restriction::{RestrictedCategory, Restrictions};
pub use server::{LogControl, LogSettings, LogSettingsUpdate, Server};
pub use shared_memory::{RegionStatus, SharedMemoryRegistry};
pub use stats::{
    BatchStatistics, FIRST_RESPONSE_BUCKETS_MS, FailureCounts, FailureReason, HistogramSnapshot,
    InferStatistics, LATENCY_BUCKETS_US, LatencyMetrics, LatencySnapshot, ModelStatistics,
    StatDuration, SummariesSnapshot, SummarySnapshot,
};
