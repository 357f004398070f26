//! Triton's Redis response cache (`--cache-config redis,host=H --cache-config
//! redis,port=P`): cached responses live in a Redis server, so every replica
//! pointed at it answers what any of them computed. A [`RedisCache`] is an
//! `oxiserve_core::CacheStore`; the server crate wires it in, so the core
//! never links a Redis client (see `docs/design/response-cache.md`).

mod blocking;
mod cache;
mod outage;
mod pool;
mod settings;
mod tls;

pub use cache::RedisCache;
pub use settings::RedisSettings;
