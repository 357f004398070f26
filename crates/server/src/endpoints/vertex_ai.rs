//! The Vertex AI endpoint (`--allow-vertex-ai`, `--vertex-ai-port`,
//! `--vertex-ai-default-model`) and its routes, `AIP_PREDICT_ROUTE` and
//! `AIP_HEALTH_ROUTE` (both required). `AIP_MODE`, `AIP_HTTP_PORT` and
//! `AIP_STORAGE_URI` are flag defaults, read with the command line.

use std::sync::Arc;

use oxiserve_core::Server;
use oxiserve_http::VertexAiOptions;

use super::listener::bind;
use super::service::{Service, Shutdown};
use crate::{cli::ServerOptions, metrics::Registry};

/// Vertex AI's address: Triton has no flag for it.
const ADDRESS: &str = "0.0.0.0";

/// Binds the Vertex AI endpoint if `--allow-vertex-ai`; the returned
/// service serves it. Fails, as Triton, without both routes, or without a
/// default model: `--vertex-ai-default-model` must be loaded, or else the
/// repository must hold exactly one ready model.
pub(super) async fn start(
    server: &Server,
    options: &ServerOptions,
    metrics: &Registry,
    shutdown: Shutdown,
) -> Result<Option<Service>, String> {
    let vertex = &options.vertex_ai;
    if !vertex.allow_vertex_ai {
        return Ok(None);
    }
    let failed = |e: String| format!("failed to start Vertex AI service: Invalid argument - {e}");
    let route = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|route| !route.is_empty())
            .ok_or_else(|| failed(format!("{name} is not defined for Vertex AI endpoint")))
    };
    let predict_route = route("AIP_PREDICT_ROUTE")?;
    let health_route = route("AIP_HEALTH_ROUTE")?;
    let ready: Vec<String> = server
        .repository_index(true)
        .into_iter()
        .map(|entry| entry.name)
        .collect();
    let default_model =
        default_model(vertex.vertex_ai_default_model.as_deref(), &ready).map_err(failed)?;
    let render = metrics.clone();
    let vertex_options = VertexAiOptions {
        predict_route,
        health_route,
        default_model,
        metrics: options
            .metrics
            .allow_metrics
            .then(|| Arc::new(move || render.render()) as oxiserve_http::RenderMetrics),
    };
    let http = super::http::http_options(options, None);
    let app =
        oxiserve_http::vertex_ai_router(server.clone(), &http, vertex_options).map_err(failed)?;
    let (listener, _) = bind("Vertex AI HTTPService", ADDRESS, vertex.vertex_ai_port).await?;
    Ok(Some(Box::pin(async move {
        oxiserve_http::serve_router(listener, app, http, shutdown.wait())
            .await
            .map_err(|e| format!("Vertex AI service failed: {e}"))
    })))
}

/// The model of predictions: the flag's, which must be ready, or else the
/// only ready one. `ready` lists the ready models' rows (a model with two
/// ready versions counts twice, as in Triton).
fn default_model(flag: Option<&str>, ready: &[String]) -> Result<String, String> {
    match (flag, ready) {
        (Some(model), _) if ready.iter().any(|name| name == model) => Ok(model.to_string()),
        (Some(model), _) => Err(format!("Expect the default model '{model}' is loaded")),
        (None, [only]) => Ok(only.clone()),
        (None, _) => Err(
            "Expect the model repository contains only a single model if default model is not \
             specified"
                .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::default_model;

    #[test]
    fn the_default_model_is_the_flags_or_the_only_one() {
        let ready = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(default_model(Some("a"), &ready(&["a", "b"])).unwrap(), "a");
        assert_eq!(default_model(None, &ready(&["a"])).unwrap(), "a");
        assert_eq!(
            default_model(Some("c"), &ready(&["a"])).unwrap_err(),
            "Expect the default model 'c' is loaded"
        );
        assert!(
            default_model(None, &ready(&["a", "b"]))
                .unwrap_err()
                .starts_with("Expect the model repository contains only a single model")
        );
        assert!(default_model(None, &[]).is_err());
    }
}
