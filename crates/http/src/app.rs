//! The application state every handler gets.

use oxiserve_core::{HeaderForward, Server};

/// The server and the frontend settings handlers need.
#[derive(Debug, Clone)]
pub(crate) struct App {
    pub server: Server,
    /// The body size limit, for error messages.
    pub max_body_bytes: usize,
    /// Inference request headers forwarded as request parameters.
    pub header_forward: Option<HeaderForward>,
}
