//! The endpoints `X-Vertex-Ai-Triton-Redirect` reaches, as Triton's Vertex
//! AI endpoint reads the header: metrics, server and model metadata,
//! health and readiness, model configuration and statistics, inference,
//! the model repository and shared memory. Generate, trace and logging
//! are not reachable.

use std::sync::LazyLock;

use axum::http::Method;
use regex::Regex;

use crate::forward::{encode_segment, model_route};

static MODEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^/v2/models/([^/]+)(?:/versions/([0-9]+))?(?:/(infer|generate|generate_stream|ready|config|stats|trace/setting))?$",
    )
    .expect("a valid pattern")
});
static HEALTH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^/v2/health/(live|ready)$").expect("a valid pattern"));
static SHARED_MEMORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^/v2/(system|cuda)sharedmemory(?:/region/([^/]+))?/(status|register|unregister)$")
        .expect("a valid pattern")
});
static REPOSITORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^/v2/repository(?:/([^/]+))?/(index|models/([^/]+)/(load|unload))$")
        .expect("a valid pattern")
});

/// Where a redirect goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Redirect {
    /// The Prometheus metrics.
    Metrics,
    /// An inference (the body read as the predict route reads it).
    Infer(String),
    /// Another KServe route, called with this method.
    Kserve(Method, String),
}

/// The target of the redirect to `endpoint` (the header's value after a
/// `/`); `None` for an endpoint the redirect does not reach.
pub(super) fn target(endpoint: &str) -> Option<Redirect> {
    let get = |path: String| Some(Redirect::Kserve(Method::GET, path));
    match endpoint {
        "/metrics" => return Some(Redirect::Metrics),
        "/v2/models/stats" | "/v2" => return get(endpoint.to_string()),
        _ => {}
    }
    if let Some(parts) = MODEL.captures(endpoint) {
        let model = &parts[1];
        let version = parts.get(2).map(|v| v.as_str());
        let kind = parts.get(3).map_or("", |k| k.as_str());
        let path = model_route(model, version, kind);
        return match kind {
            "infer" => Some(Redirect::Infer(path)),
            "" | "ready" | "config" | "stats" => get(path),
            _ => None,
        };
    }
    if HEALTH.is_match(endpoint) {
        return get(endpoint.to_string());
    }
    if let Some(parts) = SHARED_MEMORY.captures(endpoint) {
        let mut path = format!("/v2/{}sharedmemory", &parts[1]);
        if let Some(region) = parts.get(2) {
            path = format!("{path}/region/{}", encode_segment(region.as_str()));
        }
        let action = &parts[3];
        let method = if action == "status" {
            Method::GET
        } else {
            Method::POST
        };
        return Some(Redirect::Kserve(method, format!("{path}/{action}")));
    }
    if let Some(parts) = REPOSITORY.captures(endpoint) {
        let mut path = "/v2/repository".to_string();
        if let Some(repository) = parts.get(1) {
            path = format!("{path}/{}", encode_segment(repository.as_str()));
        }
        let path = match (parts.get(3), parts.get(4)) {
            (Some(model), Some(action)) => format!(
                "{path}/models/{}/{}",
                encode_segment(model.as_str()),
                action.as_str()
            ),
            _ => format!("{path}/index"),
        };
        return Some(Redirect::Kserve(Method::POST, path));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kserve(method: Method, path: &str) -> Option<Redirect> {
        Some(Redirect::Kserve(method, path.to_string()))
    }

    #[test]
    fn reads_the_endpoints_triton_reaches() {
        assert_eq!(target("/metrics"), Some(Redirect::Metrics));
        assert_eq!(target("/v2"), kserve(Method::GET, "/v2"));
        assert_eq!(
            target("/v2/health/live"),
            kserve(Method::GET, "/v2/health/live")
        );
        assert_eq!(
            target("/v2/models/stats"),
            kserve(Method::GET, "/v2/models/stats")
        );
        assert_eq!(target("/v2/models/m"), kserve(Method::GET, "/v2/models/m"));
        assert_eq!(
            target("/v2/models/m/versions/2/ready"),
            kserve(Method::GET, "/v2/models/m/versions/2/ready")
        );
        assert_eq!(
            target("/v2/models/a b/infer"),
            Some(Redirect::Infer("/v2/models/a%20b/infer".to_string()))
        );
        assert_eq!(
            target("/v2/systemsharedmemory/region/r/status"),
            kserve(Method::GET, "/v2/systemsharedmemory/region/r/status")
        );
        assert_eq!(
            target("/v2/cudasharedmemory/register"),
            kserve(Method::POST, "/v2/cudasharedmemory/register")
        );
        assert_eq!(
            target("/v2/repository/index"),
            kserve(Method::POST, "/v2/repository/index")
        );
        assert_eq!(
            target("/v2/repository/models/m/unload"),
            kserve(Method::POST, "/v2/repository/models/m/unload")
        );
    }

    #[test]
    fn leaves_out_the_others() {
        for endpoint in [
            "/v2/models/m/generate",
            "/v2/models/m/generate_stream",
            "/v2/models/m/trace/setting",
            "/v2/logging",
            "/v2/trace/setting",
            "//v2",
            "/v2/models/m/versions/x/ready",
        ] {
            assert_eq!(target(endpoint), None, "{endpoint}");
        }
    }
}
