//! The TLS handshake of one connection, with the certificate of the moment.

use std::{io, sync::Arc, time::Duration};

use parking_lot::Mutex;
use tokio::{net::TcpStream, time::Instant};
use tokio_rustls::server::TlsStream;

use crate::{files::TlsFiles, reload::Reloader};

/// How long a client gets to complete its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts TLS connections with the certificate in a [`TlsFiles`], re-read
/// when the files change. Clones share the certificate and are cheap.
#[derive(Debug, Clone)]
pub struct TlsAcceptor {
    reloader: Arc<Mutex<Reloader>>,
}

impl TlsAcceptor {
    /// Loads `files` for a server that offers the ALPN protocols `alpn`
    /// (`["h2"]` for gRPC, `["http/1.1"]` for HTTP/1), most preferred
    /// first. Fails with a message naming the file at fault: missing,
    /// unreadable, without a certificate or a private key, a key that does
    /// not match the certificate, mutual TLS without a root file...
    pub fn new(files: TlsFiles, alpn: &[&str]) -> Result<Self, String> {
        let alpn = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        let reloader = Reloader::new(files, alpn, Instant::now())?;
        Ok(Self {
            reloader: Arc::new(Mutex::new(reloader)),
        })
    }

    /// Runs the server side of the handshake on `tcp` with the current
    /// certificate (re-reading the files first if they were last checked a
    /// second ago or more). Fails if the client does not complete it within
    /// 10 seconds, does not present a valid certificate when mutual TLS
    /// requires one, or speaks no TLS.
    pub async fn accept(&self, tcp: TcpStream) -> io::Result<TlsStream<TcpStream>> {
        let config = self.reloader.lock().config(Instant::now());
        let handshake = tokio_rustls::TlsAcceptor::from(config).accept(tcp);
        tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake)
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no TLS handshake within {} s", HANDSHAKE_TIMEOUT.as_secs()),
                ))
            })
    }
}
