//! The routes: KServe v2 paths and Triton's extension paths.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    routing::{get, post},
};
use oxiserve_core::Server;

use crate::{
    HttpOptions,
    handlers::{self, health, infer, logging, metadata, repository, shared_memory, statistics},
};

/// The application state every handler gets.
#[derive(Debug, Clone)]
pub(crate) struct App {
    pub server: Server,
    /// The body size limit, for error messages.
    pub max_body_bytes: usize,
}

/// The shared memory extensions' routes (system, and CUDA answered as
/// without GPU support).
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

/// Every route of the frontend, over `server`.
pub fn router(server: Server, options: &HttpOptions) -> Router {
    let model = Router::new()
        .route("/", get(metadata::model))
        .route("/ready", get(health::model_ready))
        .route("/config", get(metadata::config))
        .route("/stats", get(statistics::model))
        .route("/infer", post(infer::infer));
    Router::new()
        .route("/v2", get(metadata::server))
        .route("/v2/health/live", get(health::live))
        .route("/v2/health/ready", get(health::ready))
        .route("/v2/models/stats", get(statistics::all))
        .nest("/v2/models/{model}", model.clone())
        .nest("/v2/models/{model}/versions/{version}", model)
        .route("/v2/repository/index", post(repository::index))
        .route("/v2/repository/models/{model}/load", post(repository::load))
        .route(
            "/v2/repository/models/{model}/unload",
            post(repository::unload),
        )
        .route("/v2/logging", get(logging::get).post(logging::update))
        .merge(shared_memory_routes())
        .fallback(|| async { handlers::not_found() })
        .method_not_allowed_fallback(|| async { handlers::method_not_allowed() })
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .with_state(App {
            server,
            max_body_bytes: options.max_body_bytes,
        })
}
