//! Triton's response cache: a model whose config has `response_cache {
//! enable: true }` answers a repeated request from the server's cache
//! (`--cache-config local,size=N`, or a store outside the core such as
//! Redis) without executing (see `docs/design/response-cache.md`).

pub(crate) mod entry;
mod insert;
mod key;
mod local;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use oxiserve_backend::BackendResponse;

use crate::cache_store::{CacheStore, Inserted};
pub(crate) use insert::CacheInsert;
pub(crate) use key::cache_key;
pub use local::LocalCache;

/// The server's response cache, shared by the models that enable it.
#[derive(Debug)]
pub struct ResponseCache {
    store: Arc<dyn CacheStore>,
}

impl ResponseCache {
    /// The cache that keeps its entries in `store`.
    pub fn new(store: Arc<dyn CacheStore>) -> Self {
        Self { store }
    }

    /// The response stored under `key` and how long the lookup took.
    pub(crate) fn lookup(&self, key: &str) -> (Option<BackendResponse>, Duration) {
        let started = Instant::now();
        let response = self.store.lookup(key).and_then(|bytes| {
            entry::decode(&bytes)
                .inspect_err(|e| log::error!("unreadable response cache entry '{key}': {e}"))
                .ok()
        });
        (response, started.elapsed())
    }

    /// Stores `response` under `key`; whether it counts as a miss
    /// (anything but [`Inserted::AlreadyExists`]), and how long it took.
    pub(crate) fn insert(&self, key: &str, response: &BackendResponse) -> (bool, Duration) {
        let started = Instant::now();
        let outcome = self.store.insert(key, entry::encode(response));
        if let Inserted::Failed(why) = &outcome {
            log::error!("Failed to insert key [{key}] into response cache: {why}");
        }
        // `Inserted::Unavailable`: the store has already said why.
        (outcome != Inserted::AlreadyExists, started.elapsed())
    }
}

#[cfg(test)]
mod tests;
