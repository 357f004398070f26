//! The Redis store: `GET` for lookups and `SET .. NX` for inserts, so the
//! first replica to compute a response stores it and the others find it.
//! Entries never expire here: Redis's own `maxmemory` policy bounds them.

use oxiserve_core::{CacheStore, Inserted};

use crate::{
    blocking::blocking,
    outage::Outage,
    pool::{CallError, Pool},
    settings::RedisSettings,
};

/// A response cache kept in a Redis server.
pub struct RedisCache {
    /// `host:port`, for the log.
    address: String,
    pool: Pool,
    outage: Outage,
}

impl std::fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCache")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl RedisCache {
    /// Connects to the server `settings` name and checks that it answers,
    /// as Triton does at start-up: a server that cannot reach its cache
    /// does not start.
    pub fn connect(settings: &RedisSettings) -> Result<Self, String> {
        let initialize = |e: String| format!("Failed to initialize RedisCache: {e}");
        let pool = Pool::new(settings).map_err(initialize)?;
        let address = settings
            .validate()
            .map(|(host, port)| format!("{host}:{port}"))
            .map_err(initialize)?;
        blocking(|| pool.call(|c| redis::cmd("PING").query::<String>(c)))
            .map_err(|(CallError::Unreachable(e) | CallError::Refused(e))| initialize(e))?;
        log::info!("Redis response cache at {address} connected");
        Ok(Self {
            address,
            pool,
            outage: Outage::default(),
        })
    }

    /// Runs `command` unless Redis is known to be down, keeping the outage's
    /// state; `None` when Redis was not asked.
    fn call<T>(
        &self,
        command: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Option<Result<T, String>> {
        if self.outage.skip() {
            return None;
        }
        match blocking(|| self.pool.call(command)) {
            Ok(value) => {
                self.outage.answered(&self.address);
                Some(Ok(value))
            }
            Err(CallError::Refused(why)) => {
                self.outage.answered(&self.address);
                Some(Err(why))
            }
            Err(CallError::Unreachable(why)) => {
                self.outage.failed(&self.address, &why);
                None
            }
        }
    }
}

impl CacheStore for RedisCache {
    fn lookup(&self, key: &str) -> Option<Vec<u8>> {
        let found = self.call(|c| redis::cmd("GET").arg(key).query::<Option<Vec<u8>>>(c))?;
        found
            .inspect_err(|why| log::error!("Failed to retrieve key: {key}. {why}"))
            .ok()
            .flatten()
    }

    fn insert(&self, key: &str, entry: Vec<u8>) -> Inserted {
        let set = |c: &mut redis::Connection| {
            redis::cmd("SET")
                .arg(key)
                .arg(entry)
                .arg("NX")
                .query::<Option<String>>(c)
        };
        match self.call(set) {
            Some(Ok(Some(_))) => Inserted::Stored,
            Some(Ok(None)) => Inserted::AlreadyExists,
            Some(Err(why)) => Inserted::Failed(why),
            None => Inserted::Unavailable,
        }
    }
}
