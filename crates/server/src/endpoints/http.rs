//! The HTTP/REST endpoint (`--http-*` flags).

use oxiserve_core::Server;

use super::{Service, Shutdown, bind};
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
    let (listener, _) = bind("HTTPService", &http.http_address, http.http_port).await?;
    let http_options = oxiserve_http::HttpOptions {
        max_body_bytes: http.http_max_input_size,
    };
    let server = server.clone();
    Ok(Some(Box::pin(async move {
        oxiserve_http::serve(listener, server, http_options, shutdown.wait())
            .await
            .map_err(|e| format!("HTTP service failed: {e}"))
    })))
}
