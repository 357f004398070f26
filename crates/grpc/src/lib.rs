//! The KServe v2 gRPC frontend (`inference.GRPCInferenceService`) with
//! Triton's extensions, so that stock `tritonclient.grpc` works unchanged:
//! health, metadata, configuration, inference (unary and streaming,
//! decoupled models included), statistics, model repository, logging and
//! trace settings, plus the standard `grpc.health.v1.Health` check. Each RPC
//! decodes, calls the core's [`Server`], and encodes; nothing else.

mod convert;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod health;
mod infer;
mod logging;
mod metadata;
mod repository;
mod restriction;
mod service;
mod shared_memory;
mod statistics;
mod stream;
mod tls;
mod trace;
mod traced;
mod transport;
mod version;

pub use error::{code_for, status};
pub use metadata::EXTENSIONS;
pub use restriction::restricted_header;
pub use tls::tls_acceptor;
pub use transport::{GrpcOptions, serve};
