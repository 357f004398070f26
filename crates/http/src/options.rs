//! The HTTP frontend's settings.

use std::time::Duration;

use oxiserve_core::{HeaderForward, Restrictions};
use oxiserve_tls::TlsAcceptor;

/// Settings of the HTTP frontend.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Largest request body accepted, in bytes (after decompression).
    pub max_body_bytes: usize,
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (and the longest a
    /// keep-alive connection stays idle).
    pub header_timeout: Duration,
    /// Longest wait for the next part of a request body.
    pub body_timeout: Duration,
    /// API groups that need a header (`--http-restricted-api`).
    pub restrictions: Restrictions,
    /// Serve HTTPS with this acceptor (`--http-use-ssl`); plain HTTP when
    /// `None`.
    pub tls: Option<TlsAcceptor>,
    /// Inference request headers to forward as request parameters
    /// (`--http-header-forward-pattern`).
    pub header_forward: Option<HeaderForward>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 * 1024 * 1024,
            max_connections: 4096,
            header_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
            restrictions: Restrictions::default(),
            tls: None,
            header_forward: None,
        }
    }
}
