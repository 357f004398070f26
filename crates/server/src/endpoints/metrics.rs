//! The Prometheus metrics endpoint (`--metrics-*` flags): `GET /metrics` in
//! the text format, as Triton serves it (other GET paths answer 200 with an
//! empty body; other methods 405).

use axum::{
    Router,
    http::{Method, StatusCode, header},
    response::{IntoResponse, Response},
};

use super::listener::bind;
use super::service::{Service, Shutdown};
use crate::{cli::ServerOptions, metrics::Registry};

const TEXT: &str = "text/plain; charset=utf-8";

/// Binds the metrics endpoint if `--allow-metrics`; the returned service
/// serves it and refreshes the CPU gauges every `--metrics-interval-ms`.
pub(super) async fn start(
    registry: Registry,
    options: &ServerOptions,
    shutdown: Shutdown,
) -> Result<Option<Service>, String> {
    let metrics = &options.metrics;
    if !metrics.allow_metrics {
        return Ok(None);
    }
    let (listener, _) = bind(
        "Metrics Service",
        &metrics.metrics_address,
        metrics.metrics_port,
    )
    .await?;
    if registry.settings().cpu_metrics {
        registry.poll_system();
        tokio::spawn(poll(registry.clone(), shutdown.clone()));
    }
    let app = Router::new().fallback(move |method: Method, uri: axum::http::Uri| {
        let registry = registry.clone();
        async move { answer(&registry, &method, uri.path()) }
    });
    Ok(Some(Box::pin(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown.wait())
            .await
            .map_err(|e| format!("Metrics service failed: {e}"))
    })))
}

fn answer(registry: &Registry, method: &Method, path: &str) -> Response {
    if method != Method::GET {
        let body = r#"{"error":"Method Not Allowed"}"#;
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::CONTENT_TYPE, "text/plain")],
            body,
        )
            .into_response();
    }
    let body = if path == "/metrics" {
        registry.render()
    } else {
        String::new()
    };
    ([(header::CONTENT_TYPE, TEXT)], body).into_response()
}

/// Refreshes the CPU and memory gauges every interval until shutdown (the
/// first reading was taken at start-up).
async fn poll(registry: Registry, shutdown: Shutdown) {
    let every = registry.settings().interval;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = ticks.tick() => registry.poll_system(),
            () = &mut stop => return,
        }
    }
}
