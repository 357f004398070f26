//! The routes: KServe v2 paths, Triton's extension paths and the OpenAI-compatible `/v1` paths.

use axum::{
    Router,
    extract::{DefaultBodyLimit, Request},
    http::StatusCode,
    middleware::{self, Next},
    response::IntoResponse,
    routing::{MethodRouter, get, post},
};
use oxiserve_core::{RestrictedCategory, Server};

use crate::{
    app::App,
    error::ApiError,
    handlers::{
        self, generate, health, infer, logging, metadata, repository, shared_memory, statistics,
        trace,
    },
    openai,
    options::HttpOptions,
};

/// The shared memory extensions' routes (system, and CUDA answered as
/// Triton answers on a machine without GPUs).
fn shared_memory_routes() -> Router<App> {
    use shared_memory as shm;
    let system = "/v2/systemsharedmemory";
    let cuda = "/v2/cudasharedmemory";
    Router::new()
        .route(&format!("{system}/status"), get(shm::system_status_all))
        .route(
            &format!("{system}/region/{{name}}/status"),
            get(shm::system_status_one),
        )
        .route(
            &format!("{system}/register"),
            post(shm::system_register_unnamed),
        )
        .route(
            &format!("{system}/region/{{name}}/register"),
            post(shm::system_register),
        )
        .route(
            &format!("{system}/unregister"),
            post(shm::system_unregister_all),
        )
        .route(
            &format!("{system}/region/{{name}}/unregister"),
            post(shm::system_unregister_one),
        )
        .route(&format!("{cuda}/status"), get(shm::cuda_status_all))
        .route(
            &format!("{cuda}/region/{{name}}/status"),
            get(shm::cuda_status_one),
        )
        .route(
            &format!("{cuda}/register"),
            post(shm::cuda_register_unnamed),
        )
        .route(
            &format!("{cuda}/region/{{name}}/register"),
            post(shm::cuda_register),
        )
        .route(&format!("{cuda}/unregister"), post(shm::cuda_unregister))
        .route(
            &format!("{cuda}/region/{{name}}/unregister"),
            post(shm::cuda_unregister),
        )
}

/// Every route of the frontend, over `server`, each API group behind its
/// restriction (if any).
pub fn router(server: Server, options: &HttpOptions) -> Router {
    use RestrictedCategory as C;
    let model = |path: &str| format!("/v2/models/{{model}}{path}");
    let version = |path: &str| format!("/v2/models/{{model}}/versions/{{version}}{path}");
    let both = |router: Router<App>, path: &str, handler: MethodRouter<App>| {
        router
            .route(&model(path), handler.clone())
            .route(&version(path), handler)
    };
    let groups = [
        (
            C::Health,
            both(
                Router::new()
                    .route("/v2/health/live", get(health::live))
                    .route("/v2/health/ready", get(health::ready)),
                "/ready",
                get(health::model_ready),
            ),
        ),
        (
            C::Metadata,
            both(
                Router::new()
                    .route("/v2", get(metadata::server))
                    .merge(openai::model_routes()),
                "",
                get(metadata::model),
            ),
        ),
        (
            C::ModelConfig,
            both(Router::new(), "/config", get(metadata::config)),
        ),
        (
            C::Statistics,
            both(
                Router::new().route("/v2/models/stats", get(statistics::all)),
                "/stats",
                get(statistics::model),
            ),
        ),
        (
            C::Inference,
            [
                ("/infer", post(infer::infer)),
                ("/generate", post(generate::generate::<false>)),
                ("/generate_stream", post(generate::generate::<true>)),
            ]
            .into_iter()
            .fold(openai::inference_routes(), |routes, (path, handler)| {
                both(routes, path, handler)
            }),
        ),
        (
            C::ModelRepository,
            Router::new()
                .route("/v2/repository/index", post(repository::index))
                .route("/v2/repository/models/{model}/load", post(repository::load))
                .route(
                    "/v2/repository/models/{model}/unload",
                    post(repository::unload),
                ),
        ),
        (
            C::Logging,
            Router::new().route("/v2/logging", get(logging::get).post(logging::update)),
        ),
        (
            C::Trace,
            Router::new()
                .route(
                    "/v2/trace/setting",
                    get(trace::get_global).post(trace::update_global),
                )
                .route(
                    &model("/trace/setting"),
                    get(trace::get_model).post(trace::update_model),
                ),
        ),
        (C::SharedMemory, shared_memory_routes()),
    ];
    groups
        .into_iter()
        .fold(Router::new(), |all, (category, routes)| {
            all.merge(restricted(
                routes,
                options.restrictions.requirement(category),
            ))
        })
        .route_layer(middleware::from_fn_with_state(
            server.clone(),
            refuse_models_after_failed_start_up,
        ))
        .fallback(|| async { handlers::not_found() })
        .method_not_allowed_fallback(|| async { handlers::method_not_allowed() })
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .with_state(App {
            server,
            max_body_bytes: options.max_body_bytes,
            header_forward: options.header_forward.clone(),
        })
}

/// After a failed start-up (`--exit-on-error=false`), the model and
/// repository APIs answer 503 "Server not ready", as Triton's do; the
/// server's own (health, metadata, logging, shared memory) still answer.
async fn refuse_models_after_failed_start_up(
    axum::extract::State(server): axum::extract::State<Server>,
    request: Request,
    next: Next,
) -> axum::response::Response {
    let path = request.uri().path();
    let model_api = path.starts_with("/v2/models") || path.starts_with("/v2/repository");
    if server.has_failed() && model_api {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "Server not ready").into_response();
    }
    next.run(request).await
}

/// `routes`, answering 403 to requests without the header `requirement`
/// names (as Triton: "This API is restricted, expecting header 'key'").
fn restricted(routes: Router<App>, requirement: Option<(&str, &str)>) -> Router<App> {
    let Some((header, value)) = requirement else {
        return routes;
    };
    let (header, value) = (header.to_string(), value.to_string());
    routes.route_layer(middleware::from_fn(move |request: Request, next: Next| {
        let allowed = request
            .headers()
            .get(header.as_str())
            .is_some_and(|given| given.as_bytes() == value.as_bytes());
        let refusal = format!("This API is restricted, expecting header '{header}'");
        async move {
            if allowed {
                next.run(request).await
            } else {
                ApiError::new(StatusCode::FORBIDDEN, refusal).into_response()
            }
        }
    }))
}
