//! TLS for oxiserve's listeners (gRPC's `--grpc-use-ssl`, HTTP's), with
//! rustls and its ring crypto provider.
//!
//! [`TlsAcceptor::new`] reads the PEM files of a [`TlsFiles`] at start-up and
//! fails with a message naming the file at fault. Afterwards the files are
//! watched: when one changes (cert-manager rewrites them in place), new
//! connections get the new certificate; a changed file that does not load is
//! logged and the previous certificate stays in use. [`TlsListener`] runs the
//! handshakes of a TCP listener's connections concurrently and hands out the
//! ones that succeed.

mod acceptor;
#[cfg(test)]
mod handshake_tests;
mod listener;
mod load;
mod reload;
#[cfg(test)]
mod test_certs;

use std::path::PathBuf;

pub use acceptor::TlsAcceptor;
pub use listener::TlsListener;
/// A server-side TLS connection over `IO`.
pub use tokio_rustls::server::TlsStream;

/// The PEM files of a TLS endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain: its own certificate first, then any
    /// intermediates.
    pub cert: PathBuf,
    /// The server certificate's private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// Certificates of the authorities that sign client certificates; read
    /// only with `mutual`.
    pub root: Option<PathBuf>,
    /// Require every client to present a certificate chained to `root`.
    pub mutual: bool,
}
