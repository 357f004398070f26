//! What a cache implementation provides: lookups and inserts of encoded
//! responses by key.

/// Where cached entries live: keys to encoded responses.
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
}
