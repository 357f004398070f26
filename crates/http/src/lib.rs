//! The KServe v2 HTTP/REST frontend with Triton's extensions: health,
//! metadata, inference (JSON and binary tensor data), classification,
//! statistics, model repository and logging. Handlers decode, call the
//! core's [`Server`], and encode; nothing else.

mod app;
mod body;
pub mod codec;
mod compression;
mod error;
mod handlers;
mod options;
mod router;
mod serve;

pub use error::status_for;
pub use handlers::metadata::EXTENSIONS;
pub use options::HttpOptions;
pub use router::router;
pub use serve::serve;
