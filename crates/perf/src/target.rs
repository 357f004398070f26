//! Where the server is: `host:port` resolved once to a socket address.

use std::net::SocketAddr;

use oxiserve_client::{Client, Protocol};

use crate::error::{Error, Result};

/// A resolved server address and the `host:port` text for Host headers.
#[derive(Debug, Clone)]
pub struct Target {
    /// The first address the host name resolves to.
    pub addr: SocketAddr,
    /// `host:port` as given, for the Host header and `:authority`.
    pub authority: String,
}

impl Target {
    /// Resolves `url` (`host:port`, optionally with an `http://` prefix and a
    /// trailing `/`).
    pub async fn resolve(url: &str) -> Result<Target> {
        let authority = authority_of(url)?;
        let mut addrs = tokio::net::lookup_host(authority.clone())
            .await
            .map_err(|e| Error::new(format!("cannot resolve '{authority}': {e}")))?;
        let addr = addrs
            .next()
            .ok_or_else(|| Error::new(format!("'{authority}' resolves to no address")))?;
        Ok(Target { addr, authority })
    }

    /// A client for the calls besides the load (metadata, statistics,
    /// repository, shared memory), checked to reach the server.
    pub async fn client(&self, grpc: bool) -> Result<Client> {
        let protocol = if grpc { Protocol::Grpc } else { Protocol::Http };
        let unreachable = |e| Error::new(format!("cannot connect to {}: {e}", self.authority));
        let client = Client::connect(&self.authority, protocol)
            .await
            .map_err(unreachable)?;
        match client.is_server_live().await {
            Err(e @ oxiserve_client::Error::Transport(_)) => Err(unreachable(e)),
            _ => Ok(client),
        }
    }
}

/// `host:port` out of a URL the way perf_analyzer takes it.
fn authority_of(url: &str) -> Result<String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("grpc://"))
        .unwrap_or(url);
    if rest.contains("://") {
        return Err(Error::new(format!(
            "unsupported URL scheme in '{url}' (plain http only)"
        )));
    }
    let rest = rest.trim_end_matches('/');
    let port_ok = rest
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if !port_ok || rest.contains('/') {
        return Err(Error::new(format!("expected host:port, got '{url}'")));
    }
    Ok(rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_takes_host_port_forms() {
        assert_eq!(authority_of("localhost:8000").unwrap(), "localhost:8000");
        assert_eq!(
            authority_of("http://127.0.0.1:80/").unwrap(),
            "127.0.0.1:80"
        );
        assert!(authority_of("https://x:1").is_err());
        assert!(authority_of("localhost").is_err());
        assert!(authority_of("host:99999").is_err());
        assert!(authority_of("host:80/v2").is_err());
    }
}
