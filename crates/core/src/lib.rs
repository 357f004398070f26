//! The oxiserve core: the model repository, loaded models and their
//! lifecycle, schedulers and instance runners, request validation and
//! statistics. It knows no HTTP or gRPC: frontends call [`Server`].

mod backends;
mod infer;
mod model;
pub mod repository;
mod scheduler;
mod server;
mod stats;

pub use backends::BackendRegistry;
pub use infer::{ResponseStream, StreamEvent};
pub use model::{LoadedModel, ModelMetadata, ModelState, TensorMetadata, VersionStatus};
pub use server::{
    IndexEntry, LoadOutcome, LogControl, LogSettings, LogSettingsUpdate, ModelControlMode, Server,
    ServerConfig,
};
pub use stats::{BatchStatistics, InferStatistics, ModelStatistics, StatDuration};
