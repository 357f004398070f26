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
    let failed = |e: std::io::Error| start_error(what, &wanted, &e);
    let listener = listen(&wanted, reuse_port).await.map_err(failed)?;
    let bound = listener.local_addr().map_err(failed)?;
    log::info!("Started {what} at {address}:{}", bound.port());
    Ok((listener, bound))
}

/// Triton's words for an endpoint that cannot listen, e.g. `failed to
/// start HTTP service: Unavailable - Socket '0.0.0.0:8000' already in use`.
fn start_error(what: &str, wanted: &str, error: &std::io::Error) -> String {
    let service = match what {
        "HTTPService" => "HTTP",
        "GRPCInferenceService" => "GRPC",
        "Sagemaker HTTPService" => "Sagemaker",
        "Vertex AI HTTPService" => "Vertex AI",
        other => other.trim_end_matches(" Service"),
    };
    match error.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "failed to start {service} service: Unavailable - Socket '{wanted}' already in use"
        ),
        _ => format!("failed to start {service} service at {wanted}: {error}"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_in_use_is_named_as_triton_names_it() {
        let in_use = std::io::Error::from(std::io::ErrorKind::AddrInUse);
        assert_eq!(
            start_error("HTTPService", "0.0.0.0:8000", &in_use),
            "failed to start HTTP service: Unavailable - Socket '0.0.0.0:8000' already in use"
        );
        assert!(
            start_error("GRPCInferenceService", "0.0.0.0:8001", &in_use)
                .starts_with("failed to start GRPC service: ")
        );
        assert!(
            start_error("Metrics Service", "0.0.0.0:8002", &in_use)
                .starts_with("failed to start Metrics service: ")
        );
    }
}
