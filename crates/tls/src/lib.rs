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
mod files;
mod listener;
mod load;
mod reload;
#[cfg(test)]
mod tests;

pub use acceptor::TlsAcceptor;
pub use files::TlsFiles;
pub use listener::TlsListener;
/// A server-side TLS connection over `IO`.
pub use tokio_rustls::server::TlsStream;
