//! The HTTP/REST endpoint (`--http-*` flags).

use std::time::Duration;

use oxiserve_core::Server;

use oxiserve_tls::TlsAcceptor;

use super::header_forward::header_forward;
use super::listener::bind;
use super::restrictions::restrictions;
use super::service::{Service, Shutdown};
use super::tls;
use crate::cli::ServerOptions;

/// Binds the HTTP endpoint if `--allow-http`; the returned service serves it.
pub(super) async fn start(
    server: &Server,
    options: &ServerOptions,
    shutdown: Shutdown,
) -> Result<Option<Service>, String> {
    let http = &options.http;
    if !http.allow_http {
        return Ok(None);
    }
    let tls = tls::files(http.ssl())?
        .map(|files| TlsAcceptor::new(files, &["http/1.1"]))
        .transpose()
        .map_err(|e| format!("HTTP SSL: {e}"))?;
    let header_forward = header_forward(
        "http-header-forward-pattern",
        http.http_header_forward_pattern.as_deref(),
    )?;
    let (listener, _) = bind("HTTPService", &http.http_address, http.http_port).await?;
    let http_options = oxiserve_http::HttpOptions {
        header_forward,
        ..http_options(options, tls)
    };
    let server = server.clone();
    Ok(Some(Box::pin(async move {
        oxiserve_http::serve(listener, server, http_options, shutdown.wait())
            .await
            .map_err(|e| format!("HTTP service failed: {e}"))
    })))
}

/// The HTTP frontend's settings from the `--http-*` flags (the SageMaker
/// and Vertex AI endpoints take their limits too).
pub(super) fn http_options(
    options: &ServerOptions,
    tls: Option<TlsAcceptor>,
) -> oxiserve_http::HttpOptions {
    let http = &options.http;
    oxiserve_http::HttpOptions {
        max_body_bytes: http.http_max_input_size,
        max_connections: http.http_max_connections,
        header_timeout: Duration::from_secs(http.http_header_timeout_secs),
        body_timeout: Duration::from_secs(http.http_body_timeout_secs),
        // As in Triton, the header is the flag's key as is.
        restrictions: restrictions(&http.http_restricted_api, str::to_string),
        tls,
        header_forward: None,
    }
}
