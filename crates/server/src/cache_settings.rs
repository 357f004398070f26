//! `--cache-config` (and the deprecated `--response-cache-byte-size`) to
//! the store the core's response cache keeps its entries in, refusing what
//! Triton would not start with.

use std::sync::Arc;

use oxiserve_core::{CacheStore, LocalCache};
use oxiserve_redis_cache::{RedisCache, RedisSettings};

use crate::cli::{resources::CacheOptions, values::NamedSetting};

/// The cache the flags choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheChoice {
    /// Triton's `local` cache: an LRU in this process of at most `size` bytes.
    Local { size: u64 },
    /// Triton's `redis` cache.
    Redis(Box<RedisSettings>),
}

impl CacheChoice {
    /// The store, connected: a Redis server that does not answer stops the
    /// start, as in Triton.
    pub fn open(&self) -> Result<Arc<dyn CacheStore>, String> {
        Ok(match self {
            Self::Local { size } => Arc::new(LocalCache::new(*size)),
            Self::Redis(settings) => Arc::new(RedisCache::connect(settings)?),
        })
    }
}

/// The response cache the flags ask for; `None` when none; the error names
/// the flag. `variable` reads the environment (the Redis credentials).
pub fn from_options(
    options: &CacheOptions,
    variable: impl Fn(&str) -> Option<String>,
) -> Result<Option<CacheChoice>, String> {
    if let Some(size) = options.response_cache_byte_size {
        return Ok(Some(CacheChoice::Local { size }));
    }
    let Some(first) = options.cache_config.first() else {
        return Ok(None);
    };
    if let Some(other) = options.cache_config.iter().find(|s| s.name != first.name) {
        return Err(format!(
            "--cache-config: found multiple cache configurations, but only a single cache \
             is currently supported (got '{}' and '{}')",
            first.name, other.name
        ));
    }
    match first.name.as_str() {
        "local" => local(&options.cache_config).map(Some),
        "redis" => redis(&options.cache_config, variable).map(Some),
        name => Err(format!(
            "{}: no cache '{name}' in this build (available: local, redis)",
            flag(first)
        )),
    }
}

fn flag(s: &NamedSetting) -> String {
    format!("--cache-config={},{}={}", s.name, s.setting, s.value)
}

fn local(settings: &[NamedSetting]) -> Result<CacheChoice, String> {
    let mut size = None;
    for s in settings {
        match s.setting.as_str() {
            "size" => {
                let bytes = s
                    .value
                    .parse::<u64>()
                    .map_err(|_| format!("{}: the size must be a number of bytes", flag(s)))?;
                size = Some(bytes);
            }
            other => {
                return Err(format!(
                    "{}: the local cache has no setting '{other}' (it takes size)",
                    flag(s)
                ));
            }
        }
    }
    let size = size.ok_or(
        "--cache-config: the local cache needs its size: --cache-config=local,size=<bytes>",
    )?;
    Ok(CacheChoice::Local { size })
}

fn redis(
    settings: &[NamedSetting],
    variable: impl Fn(&str) -> Option<String>,
) -> Result<CacheChoice, String> {
    let mut redis = RedisSettings::from_environment(variable);
    for s in settings {
        redis
            .set(&s.setting, &s.value)
            .map_err(|e| format!("{}: {e}", flag(s)))?;
    }
    redis
        .validate()
        .map_err(|e| format!("--cache-config: {e}"))?;
    Ok(CacheChoice::Redis(Box::new(redis)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(flags: &[&str]) -> Result<Option<CacheChoice>, String> {
        let options = CacheOptions {
            cache_config: flags.iter().map(|f| f.parse().unwrap()).collect(),
            cache_directory: "/opt/tritonserver/caches".into(),
            response_cache_byte_size: None,
        };
        from_options(&options, |_| None)
    }

    #[test]
    fn local_cache_sizes() {
        assert_eq!(settings(&[]), Ok(None));
        assert_eq!(
            settings(&["local,size=1048576"]),
            Ok(Some(CacheChoice::Local { size: 1048576 }))
        );
    }

    #[test]
    fn redis_settings_one_flag_each() {
        let Ok(Some(CacheChoice::Redis(redis))) =
            settings(&["redis,host=cache", "redis,port=6380", "redis,pool_size=2"])
        else {
            panic!("a redis cache");
        };
        assert_eq!(redis.validate(), Ok(("cache", 6380)));
        assert_eq!(redis.pool_size, 2);
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (flags, error) in [
            (
                &["local,size=big"][..],
                "--cache-config=local,size=big: the size must be a number of bytes",
            ),
            (
                &["local,colour=red"][..],
                "--cache-config=local,colour=red: the local cache has no setting 'colour'",
            ),
            (
                &["fancy,size=1"][..],
                "--cache-config=fancy,size=1: no cache 'fancy' in this build",
            ),
            (
                &["local,size=1", "other,size=1"][..],
                "--cache-config: found multiple cache configurations",
            ),
            (
                &["redis,host=h", "redis,port=high"][..],
                "--cache-config=redis,port=high: the port must be a number",
            ),
            (
                &["redis,host=h"][..],
                "--cache-config: Failed to initialize RedisCache, didn't specify address",
            ),
        ] {
            let message = settings(flags).unwrap_err();
            assert!(message.starts_with(error), "{message}");
        }
    }
}
