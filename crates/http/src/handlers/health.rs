//! Liveness and readiness of the server and of models.

use axum::{
    extract::{Path, State},
    http::StatusCode,
};

use super::ModelPath;
use crate::{
    app::App,
    error::{ApiError, ApiResult},
};

fn status(ok: bool) -> StatusCode {
    if ok {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    }
}

/// `GET /v2/health/live`
pub(crate) async fn live(State(app): State<App>) -> StatusCode {
    status(app.server.is_live())
}

/// `GET /v2/health/ready`
pub(crate) async fn ready(State(app): State<App>) -> StatusCode {
    status(app.server.is_ready())
}

/// `GET /v2/models/{model}[/versions/{version}]/ready`
pub(crate) async fn model_ready(
    State(app): State<App>,
    Path(path): Path<ModelPath>,
) -> ApiResult<StatusCode> {
    let version = path.version()?;
    if app.server.model_ready(&path.model, version) {
        Ok(StatusCode::OK)
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Model version not ready",
        ))
    }
}
