//! The PEM files of a TLS endpoint, as the command line names them.

use std::path::PathBuf;

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
