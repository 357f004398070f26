//! Binding an endpoint's listening socket.

use std::net::SocketAddr;

use tokio::net::TcpListener;

/// Binds `address:port` and logs Triton's `Started <what> at <address>:<port>`
/// line with the port actually bound (port 0 picks a free one).
pub(crate) async fn bind(
    what: &str,
    address: &str,
    port: u16,
) -> Result<(TcpListener, SocketAddr), String> {
    bind_with(what, address, port, false).await
}

/// [`bind`], with SO_REUSEPORT when `reuse_port` (`--reuse-grpc-port`), so
/// that several servers can listen on one port.
pub(crate) async fn bind_with(
    what: &str,
    address: &str,
    port: u16,
    reuse_port: bool,
) -> Result<(TcpListener, SocketAddr), String> {
    let wanted = format!("{address}:{port}");
    let listener = listen(&wanted, reuse_port)
        .await
        .map_err(|e| format!("failed to start {what} at {wanted}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("failed to start {what} at {wanted}: {e}"))?;
    log::info!("Started {what} at {address}:{}", bound.port());
    Ok((listener, bound))
}

async fn listen(address: &str, reuse_port: bool) -> std::io::Result<TcpListener> {
    if !reuse_port {
        return TcpListener::bind(address).await;
    }
    let Some(address) = tokio::net::lookup_host(address).await?.next() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "the address resolves to nothing",
        ));
    };
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(address)?;
    socket.listen(1024)
}
