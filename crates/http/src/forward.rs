//! Handing a request of the SageMaker or Vertex AI endpoint on to a KServe
//! route, as Triton's endpoints call the HTTP endpoint's handlers: same
//! handlers, same answers, with the path and method the endpoint chose.

use axum::{
    Router,
    extract::Request,
    http::{Method, Uri},
    response::Response,
};
use oxiserve_core::{Restrictions, Server};
use tower::ServiceExt;

use crate::{app::App, options::HttpOptions, router::router};

/// What a door (the SageMaker or Vertex AI endpoint) works with: the server
/// with the HTTP endpoint's limits, and the KServe routes it forwards to.
pub(crate) struct Door {
    pub app: App,
    router: Router,
}

impl Door {
    /// A door onto the KServe routes of `server`, without
    /// `--http-restricted-api`'s restrictions (Triton's SageMaker and Vertex
    /// AI endpoints have none).
    pub fn new(server: Server, options: &HttpOptions) -> Self {
        // As Triton's, these endpoints forward no header.
        let options = HttpOptions {
            restrictions: Restrictions::default(),
            header_forward: None,
            ..options.clone()
        };
        let app = App {
            server: server.clone(),
            max_body_bytes: options.max_body_bytes,
            header_forward: None,
        };
        Self {
            app,
            router: router(server, &options),
        }
    }

    /// Answers `request` as the route `method path` answers it (headers,
    /// body and extensions go along).
    pub async fn forward(&self, request: Request, method: Method, path: &str) -> Response {
        let (mut parts, body) = request.into_parts();
        parts.method = method;
        parts.uri = match Uri::try_from(path) {
            Ok(uri) => uri,
            // `path` is made of encoded segments; never reached.
            Err(_) => Uri::from_static("/"),
        };
        let request = Request::from_parts(parts, body);
        let Ok(response) = self.router.clone().oneshot(request).await;
        response
    }
}

/// `/v2/models/{model}[/versions/{version}]/{kind}` (`kind` may be empty),
/// the model name percent-encoded so that the route reads it back as it is.
pub(crate) fn model_route(model: &str, version: Option<&str>, kind: &str) -> String {
    let mut path = format!("/v2/models/{}", encode_segment(model));
    if let Some(version) = version {
        path.push_str("/versions/");
        path.push_str(&encode_segment(version));
    }
    if !kind.is_empty() {
        path.push('/');
        path.push_str(kind);
    }
    path
}

/// `text` as one path segment: every byte but RFC 3986's unreserved
/// characters percent-encoded.
pub(crate) fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_routes_keep_names_as_they_are() {
        assert_eq!(model_route("m", None, "infer"), "/v2/models/m/infer");
        assert_eq!(
            model_route("a b/c%", Some("2"), "ready"),
            "/v2/models/a%20b%2Fc%25/versions/2/ready"
        );
        assert_eq!(model_route("m.v_1~x", None, ""), "/v2/models/m.v_1~x");
    }
}
