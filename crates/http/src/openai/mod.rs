//! An OpenAI-compatible API under `/v1`, on the HTTP endpoint: a thin
//! mapping onto ordinary inference requests, as the generate extension is.
//!
//! - `GET /v1/models[/{model}]`: the ready models.
//! - `POST /v1/completions` and `/v1/chat/completions` (plain and
//!   `stream: true`) for models of the generate convention: `text_input`
//!   in, `text_output` out (see `generation`); chat messages become the
//!   prompt through the model's `chat_template` (see `template`).
//! - `POST /v1/embeddings` for models with one text input and one float
//!   output.
//!
//! Errors are OpenAI's error objects (`error`), with the status of the
//! failure: 404 for an unknown or unready model, 400 for a bad request.

mod answer;
mod body;
mod chat;
mod completions;
mod embeddings;
mod error;
mod generation;
mod models;
mod reply;
mod stream;
mod template;

use axum::{
    Router,
    routing::{get, post},
};

use crate::app::App;

/// The model listing (restricted as metadata is).
pub(crate) fn model_routes() -> Router<App> {
    // `created` of the models is when the routes were made.
    reply::started_at();
    Router::new()
        .route("/v1/models", get(models::list))
        .route("/v1/models/{model}", get(models::retrieve))
}

/// The inference routes (restricted as inference is).
pub(crate) fn inference_routes() -> Router<App> {
    Router::new()
        .route("/v1/completions", post(completions::completions))
        .route("/v1/chat/completions", post(chat::chat_completions))
        .route("/v1/embeddings", post(embeddings::embeddings))
}
