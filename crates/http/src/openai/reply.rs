//! What answers are made of: the endpoint, id, creation time and model
//! every completion answer carries, and JSON bodies.

use std::{
    hash::{BuildHasher, RandomState},
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{SystemTime, UNIX_EPOCH},
};

use axum::{
    http::header,
    response::{IntoResponse, Response},
};
use serde::Serialize;

use super::error::OpenAiError;

/// Which endpoint answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    /// `/v1/completions`.
    Completions,
    /// `/v1/chat/completions`.
    Chat,
}

/// The identity of one answer (its chunks share it).
#[derive(Debug, Clone)]
pub(super) struct Reply {
    pub endpoint: Endpoint,
    pub id: String,
    pub created: u64,
    pub model: String,
}

impl Reply {
    /// A new answer of `endpoint` from `model`, its id `cmpl-` or
    /// `chatcmpl-` and 32 hex digits.
    pub fn new(endpoint: Endpoint, model: &str) -> Self {
        let prefix = match endpoint {
            Endpoint::Completions => "cmpl",
            Endpoint::Chat => "chatcmpl",
        };
        Self {
            endpoint,
            id: format!("{prefix}-{}", unique_hex()),
            created: unix_now(),
            model: model.to_string(),
        }
    }
}

/// `value` as a JSON answer.
pub(super) fn json(value: &impl Serialize) -> Response {
    match serde_json::to_string(value) {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(e) => OpenAiError::internal(e.to_string()).into_response(),
    }
}

/// 32 hex digits no other answer of this process has: a random key
/// (std's hasher seeds) and a counter.
fn unique_hex() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let random = RandomState::new().hash_one(count);
    format!("{random:016x}{count:016x}")
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// When the OpenAI routes were made (the HTTP endpoint's start), in Unix
/// seconds.
pub(super) fn started_at() -> u64 {
    static STARTED: OnceLock<u64> = OnceLock::new();
    *STARTED.get_or_init(unix_now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let started = started_at();
        let (a, b) = (
            Reply::new(Endpoint::Completions, "m"),
            Reply::new(Endpoint::Completions, "m"),
        );
        assert_ne!(a.id, b.id);
        assert!(
            a.id.starts_with("cmpl-") && a.id.len() == 5 + 32,
            "{}",
            a.id
        );
        assert_eq!(a.model, "m");
        assert!(a.created >= started);
    }
}
