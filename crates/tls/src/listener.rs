//! A TCP listener whose connections come out TLS-handshaken.

use std::{
    future::poll_fn,
    io,
    net::SocketAddr,
    task::{Context, Poll},
};

use tokio::{
    net::{TcpListener, TcpStream},
    task::JoinSet,
};
use tokio_rustls::server::TlsStream;

use crate::acceptor::TlsAcceptor;

/// A handshake's outcome, with the client's address.
type Handshake = (io::Result<TlsStream<TcpStream>>, SocketAddr);

/// Accepts TCP connections (with `TCP_NODELAY`) and runs their TLS
/// handshakes concurrently, each in a task of its own, so that a slow or
/// silent client holds up no other. A failed handshake drops its
/// connection only, with a debug log line. Dropping the listener closes
/// the socket and ends the handshakes still under way.
#[derive(Debug)]
pub struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    handshakes: JoinSet<Handshake>,
}

impl TlsListener {
    /// Serves TLS with `acceptor` on `tcp`.
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> Self {
        Self {
            tcp,
            acceptor,
            handshakes: JoinSet::new(),
        }
    }

    /// The next connection whose handshake succeeded, and its client's
    /// address. An error is one of accepting a TCP connection (such as too
    /// many open files); the listener goes on working after it.
    pub async fn accept(&mut self) -> io::Result<(TlsStream<TcpStream>, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// [`accept`](Self::accept) as a poll function, for `Stream`s over the
    /// listener. Must be polled within a Tokio runtime (it spawns the
    /// handshakes).
    pub fn poll_accept(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(TlsStream<TcpStream>, SocketAddr)>> {
        // Start the handshake of every waiting connection first: polling the
        // handshakes after that wakes this task when any of them ends.
        let accept_error = self.start_handshakes(cx);
        while let Poll::Ready(Some(finished)) = self.handshakes.poll_join_next(cx) {
            match finished {
                Ok((Ok(tls), peer)) => return Poll::Ready(Ok((tls, peer))),
                Ok((Err(e), peer)) => log::debug!("TLS handshake with {peer} failed: {e}"),
                Err(e) => log::debug!("TLS handshake task ended: {e}"),
            }
        }
        match accept_error {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Pending,
        }
    }

    /// Starts a handshake for each connection waiting on the socket; stops
    /// at the first accept error and returns it.
    fn start_handshakes(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        loop {
            match self.tcp.poll_accept(cx) {
                Poll::Ready(Ok((tcp, peer))) => {
                    if let Err(e) = tcp.set_nodelay(true) {
                        log::debug!("cannot set TCP_NODELAY for {peer}: {e}");
                    }
                    let acceptor = self.acceptor.clone();
                    self.handshakes
                        .spawn(async move { (acceptor.accept(tcp).await, peer) });
                }
                Poll::Ready(Err(e)) => return Some(e),
                Poll::Pending => return None,
            }
        }
    }
}
