//! Triton's `local` cache: least recently used entries go first once the
//! entries' bytes would exceed the size.

use std::collections::{BTreeMap, HashMap};

use parking_lot::Mutex;

use crate::cache_store::{CacheStore, Inserted};

/// An in-process LRU cache bounded by the bytes of its keys and entries.
#[derive(Debug)]
pub struct LocalCache {
    size: u64,
    state: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    /// Key to entry and its last use.
    entries: HashMap<String, (Vec<u8>, u64)>,
    /// Last use to key, oldest first.
    order: BTreeMap<u64, String>,
    used: u64,
    clock: u64,
}

impl LocalCache {
    /// An empty cache of `size` bytes.
    pub fn new(size: u64) -> Self {
        Self {
            size,
            state: Mutex::default(),
        }
    }
}

fn cost(key: &str, entry: &[u8]) -> u64 {
    (key.len() + entry.len()) as u64
}

impl CacheStore for LocalCache {
    fn lookup(&self, key: &str) -> Option<Vec<u8>> {
        let mut lru = self.state.lock();
        lru.clock += 1;
        let now = lru.clock;
        let (entry, used) = lru.entries.get_mut(key)?;
        let previous = std::mem::replace(used, now);
        let entry = entry.clone();
        lru.order.remove(&previous);
        lru.order.insert(now, key.to_string());
        Some(entry)
    }

    fn insert(&self, key: &str, entry: Vec<u8>) -> Inserted {
        let needed = cost(key, &entry);
        if needed > self.size {
            return Inserted::Failed(format!(
                "entry of {needed} bytes is larger than the cache ({} bytes)",
                self.size
            ));
        }
        let mut lru = self.state.lock();
        if lru.entries.contains_key(key) {
            return Inserted::AlreadyExists;
        }
        while lru.used + needed > self.size {
            let Some((_, oldest)) = lru.order.pop_first() else {
                break;
            };
            if let Some((evicted, _)) = lru.entries.remove(&oldest) {
                lru.used -= cost(&oldest, &evicted);
            }
        }
        lru.clock += 1;
        let now = lru.clock;
        lru.used += needed;
        lru.order.insert(now, key.to_string());
        lru.entries.insert(key.to_string(), (entry, now));
        Inserted::Stored
    }
}
