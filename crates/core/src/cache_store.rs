//! What a response cache store provides: lookups and inserts of encoded
//! responses by key. The local LRU (`cache/local.rs`) is one; stores
//! outside the core (Redis) are others.

/// Where cached entries live: keys to encoded responses. A store that
/// cannot answer (e.g. a server that is down) answers a lookup with `None`:
/// the request runs as a miss and never fails because of the cache.
pub trait CacheStore: Send + Sync + std::fmt::Debug {
    /// The entry stored under `key`, if any.
    fn lookup(&self, key: &str) -> Option<Vec<u8>>;
    /// Stores `entry` under `key`; what happened.
    fn insert(&self, key: &str, entry: Vec<u8>) -> Inserted;
}

/// The outcome of [`CacheStore::insert`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    Stored,
    /// Another request stored the key first (Triton's `ALREADY_EXISTS`):
    /// not a miss.
    AlreadyExists,
    /// Not stored, and why (e.g. larger than the whole cache).
    Failed(String),
    /// Not stored because the store cannot be reached; the store logs that
    /// itself, once per outage rather than once per request.
    Unavailable,
}
