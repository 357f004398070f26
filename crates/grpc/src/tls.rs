//! gRPC over TLS (`--grpc-use-ssl`): a [`TlsListener`]'s handshaken
//! connections as tonic's incoming stream (tonic's own TLS stays off).

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use oxiserve_tls::{TlsAcceptor, TlsFiles, TlsListener, TlsStream};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// The TLS acceptor of a gRPC endpoint serving `files`: it offers HTTP/2
/// (ALPN `h2`), which gRPC clients require. Fails with a message naming the
/// file at fault.
pub fn tls_acceptor(files: TlsFiles) -> Result<TlsAcceptor, String> {
    TlsAcceptor::new(files, &["h2"])
}

/// The connections of a [`TlsListener`], for `serve_with_incoming_shutdown`.
pub(crate) struct TlsIncoming(pub(crate) TlsListener);

impl Stream for TlsIncoming {
    type Item = io::Result<TlsConnection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0
            .poll_accept(cx)
            .map(|accepted| Some(accepted.map(|(tls, _)| TlsConnection(tls))))
    }
}

/// A TLS connection; requests see its TCP addresses, as over plain TCP.
pub(crate) struct TlsConnection(TlsStream<TcpStream>);

impl Connected for TlsConnection {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.0.get_ref().0.connect_info()
    }
}

impl AsyncRead for TlsConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
