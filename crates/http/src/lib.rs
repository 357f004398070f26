//! The KServe v2 HTTP/REST frontend with Triton's extensions: health,
//! metadata, inference (JSON and binary tensor data), classification,
//! statistics, model repository and logging. Handlers decode, call the
//! core's [`Server`], and encode; nothing else.

mod body;
pub mod codec;
mod compression;
mod error;
mod handlers;
mod router;

use std::{future::Future, io};

use oxiserve_core::Server;
use tokio::net::TcpListener;

pub use error::status_for;
pub use handlers::metadata::EXTENSIONS;
pub use router::router;

/// Settings of the HTTP frontend.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Largest request body accepted, in bytes (after decompression).
    pub max_body_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Serves `server` on `listener` until `shutdown` completes; requests in
/// flight then finish.
pub async fn serve(
    listener: TcpListener,
    server: Server,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    axum::serve(listener, router(server, &options))
        .with_graceful_shutdown(shutdown)
        .await
}
