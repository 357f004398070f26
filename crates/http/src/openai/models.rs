//! `GET /v1/models` and `GET /v1/models/{model}`: the ready models, and
//! the lookup every other endpoint makes (an unknown or unready model is
//! OpenAI's 404).

use std::{collections::BTreeSet, sync::Arc};

use axum::{
    extract::{Path, State},
    response::Response,
};
use oxiserve_core::LoadedModel;
use serde_json::{Value, json};

use super::{
    error::{OpenAiError, OpenAiResult},
    reply::{json, started_at},
};
use crate::app::App;

/// Who `owned_by` names.
const OWNER: &str = "oxiserve";

/// The ready model `name` (its highest ready version), or a 404.
pub(super) fn find(app: &App, name: &str) -> OpenAiResult<Arc<LoadedModel>> {
    app.server
        .model(name, None)
        .map_err(|e| OpenAiError::model_not_found(name, &e.message))
}

/// A model object: `created` is when the HTTP endpoint started (oxiserve
/// keeps no load time per model).
fn model_object(name: &str) -> Value {
    json!({"id": name, "object": "model", "created": started_at(), "owned_by": OWNER})
}

/// Every model with a ready version, by name.
pub(super) async fn list(State(app): State<App>) -> Response {
    let names: BTreeSet<String> = app
        .server
        .loaded_models()
        .iter()
        .map(|model| model.name().to_string())
        .collect();
    let data: Vec<Value> = names.iter().map(|name| model_object(name)).collect();
    json(&json!({"object": "list", "data": data}))
}

/// One model, if it is ready.
pub(super) async fn retrieve(
    State(app): State<App>,
    Path(name): Path<String>,
) -> OpenAiResult<Response> {
    find(&app, &name)?;
    Ok(json(&model_object(&name)))
}
