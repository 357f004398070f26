//! The oxiserve core: the model repository, loaded models and their
//! lifecycle, schedulers and instance runners, request validation and
//! statistics. It knows no HTTP or gRPC: frontends call [`Server`].

mod backends;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod infer;
mod model;
pub mod repository;
mod restriction;
mod scheduler;
mod server;
mod shared_memory;
mod stats;

pub use backends::BackendRegistry;
pub use infer::{ResponseStream, StreamEvent};
pub use model::{LoadedModel, ModelMetadata, ModelState, TensorMetadata, VersionStatus};
pub use restriction::{RestrictedCategory, Restrictions};
pub use server::{
    IndexEntry, LogControl, LogSettings, LogSettingsUpdate, ModelControlMode, Poller,
    RepositorySync, Server, ServerConfig, ServerLimits,
};
pub use shared_memory::{RegionStatus, SharedMemoryRegistry, cuda_register, cuda_status};
pub use stats::{
    BatchStatistics, FailureCounts, FailureReason, HistogramSnapshot, InferStatistics,
    LATENCY_BUCKETS_US, LatencySnapshot, ModelStatistics, StatDuration,
};
