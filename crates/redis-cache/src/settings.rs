//! The Redis cache's settings, as Triton's redis cache takes them: one
//! `--cache-config redis,<key>=<value>` per key, with the user name and
//! password also read from `TRITONCACHE_REDIS_USERNAME` and
//! `TRITONCACHE_REDIS_PASSWORD` (a flag wins over the environment).

use std::{path::PathBuf, time::Duration};

/// Where the Redis server is and how to talk to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSettings {
    pub host: Option<String>,
    pub port: Option<u16>,
    /// The ACL user (Redis's `default` when unset).
    pub user: Option<String>,
    pub password: Option<String>,
    /// The database number.
    pub db: i64,
    /// How long to wait for a connection to open; `None`: for ever.
    pub connect_timeout: Option<Duration>,
    /// How long to wait for Redis to answer a command; `None`: for ever.
    pub socket_timeout: Option<Duration>,
    /// How many connections the cache keeps open at most.
    pub pool_size: usize,
    /// How long a request waits for a free connection; `None`: for ever.
    pub wait_timeout: Option<Duration>,
    /// TLS (`tls_enabled=true`) and its files.
    pub tls_enabled: bool,
    /// The client certificate and key (PEM) for mutual TLS.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The certificate authority (PEM) that signed Redis's certificate, or a
    /// folder of them; the system's authorities when neither is set.
    pub cacert: Option<PathBuf>,
    pub cacert_dir: Option<PathBuf>,
    /// The server name TLS checks; only the host's own name is supported.
    pub sni: Option<String>,
}

impl Default for RedisSettings {
    /// Triton's defaults: one connection, a second's wait for it, no
    /// timeouts on connecting or answering.
    fn default() -> Self {
        Self {
            host: None,
            port: None,
            user: None,
            password: None,
            db: 0,
            connect_timeout: None,
            socket_timeout: None,
            pool_size: 1,
            wait_timeout: Some(Duration::from_millis(1000)),
            tls_enabled: false,
            cert: None,
            key: None,
            cacert: None,
            cacert_dir: None,
            sni: None,
        }
    }
}

/// The environment variables Triton's redis cache reads its credentials from.
pub const USERNAME_VARIABLE: &str = "TRITONCACHE_REDIS_USERNAME";
pub const PASSWORD_VARIABLE: &str = "TRITONCACHE_REDIS_PASSWORD";

impl RedisSettings {
    /// The defaults with the credentials `variable` gives (the process
    /// environment in the server).
    pub fn from_environment(variable: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            user: variable(USERNAME_VARIABLE),
            password: variable(PASSWORD_VARIABLE),
            ..Self::default()
        }
    }

    /// Applies one `key=value` setting; the error says what is wrong with it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "host" => self.host = Some(value.to_string()),
            "port" => {
                self.port = Some(
                    value
                        .parse()
                        .map_err(|_| "the port must be a number from 0 to 65535".to_string())?,
                )
            }
            "user" => self.user = Some(value.to_string()),
            "password" => self.password = Some(value.to_string()),
            "db" => {
                self.db = value
                    .parse()
                    .map_err(|_| "the database must be a number".to_string())?
            }
            "connect_timeout" => self.connect_timeout = milliseconds(value)?,
            "socket_timeout" => self.socket_timeout = milliseconds(value)?,
            "wait_timeout" => self.wait_timeout = milliseconds(value)?,
            "pool_size" => {
                self.pool_size = value
                    .parse()
                    .ok()
                    .filter(|&size| size > 0)
                    .ok_or("the pool size must be a number of connections, at least 1")?
            }
            "tls_enabled" => {
                self.tls_enabled = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err("tls_enabled must be true or false".into()),
                }
            }
            "cert" => self.cert = Some(value.into()),
            "key" => self.key = Some(value.into()),
            "cacert" => self.cacert = Some(value.into()),
            "cacert_dir" => self.cacert_dir = Some(value.into()),
            "sni" => self.sni = Some(value.to_string()),
            other => {
                return Err(format!(
                    "the redis cache has no setting '{other}' (it takes host, port, user, \
                     password, db, connect_timeout, socket_timeout, pool_size, wait_timeout, \
                     tls_enabled, cert, key, cacert, cacert_dir and sni)"
                ));
            }
        }
        Ok(())
    }

    /// The host and port, which Triton requires, and the TLS settings'
    /// consistency.
    pub fn validate(&self) -> Result<(&str, u16), String> {
        let (Some(host), Some(port)) = (&self.host, self.port) else {
            return Err(
                "Failed to initialize RedisCache, didn't specify address. Must at a \
                        minimum specify 'host' and 'port' in the configuration - e.g. \
                        --cache-config redis,host=redis --cache-config redis,port=6379"
                    .into(),
            );
        };
        if self.tls_enabled {
            if self.cert.is_some() != self.key.is_some() {
                return Err("mutual TLS needs both cert and key".into());
            }
            if let Some(sni) = self.sni.as_ref().filter(|sni| *sni != host) {
                return Err(format!(
                    "sni '{sni}' differs from host '{host}': the host's name is the one TLS \
                     checks, so connect by the name in Redis's certificate"
                ));
            }
        }
        Ok((host, port))
    }
}

/// Milliseconds, 0 meaning no limit (as Triton's settings read them).
fn milliseconds(value: &str) -> Result<Option<Duration>, String> {
    let ms: u64 = value
        .parse()
        .map_err(|_| "a timeout must be a number of milliseconds".to_string())?;
    Ok((ms > 0).then(|| Duration::from_millis(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Result<RedisSettings, String> {
        let mut settings = RedisSettings::default();
        for (key, value) in pairs {
            settings.set(key, value)?;
        }
        Ok(settings)
    }

    #[test]
    fn reads_triton_keys() {
        let s = settings(&[
            ("host", "redis"),
            ("port", "6380"),
            ("db", "3"),
            ("socket_timeout", "250"),
            ("connect_timeout", "0"),
            ("pool_size", "4"),
            ("wait_timeout", "0"),
        ])
        .unwrap();
        assert_eq!(s.validate(), Ok(("redis", 6380)));
        assert_eq!(s.db, 3);
        assert_eq!(s.socket_timeout, Some(Duration::from_millis(250)));
        assert_eq!(s.connect_timeout, None);
        assert_eq!(s.pool_size, 4);
        assert_eq!(s.wait_timeout, None);
    }

    #[test]
    fn flags_win_over_the_environment() {
        let variables = |name: &str| Some(format!("from {name}"));
        let mut s = RedisSettings::from_environment(variables);
        assert_eq!(s.user.as_deref(), Some("from TRITONCACHE_REDIS_USERNAME"));
        s.set("password", "flag").unwrap();
        assert_eq!(s.password.as_deref(), Some("flag"));
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        for (pair, error) in [
            (("port", "redis"), "the port must be a number"),
            (("port", "70000"), "the port must be a number"),
            (("db", "x"), "the database must be a number"),
            (("pool_size", "0"), "at least 1"),
            (("socket_timeout", "-1"), "milliseconds"),
            (("tls_enabled", "yes"), "true or false"),
            (("colour", "red"), "no setting 'colour'"),
        ] {
            let message = settings(&[pair]).unwrap_err();
            assert!(message.contains(error), "{pair:?}: {message}");
        }
    }

    #[test]
    fn host_and_port_are_required() {
        for pairs in [&[("host", "redis")][..], &[("port", "6379")][..], &[][..]] {
            let message = settings(pairs).unwrap().validate().unwrap_err();
            assert!(message.contains("Must at a minimum specify 'host' and 'port'"));
        }
    }

    #[test]
    fn tls_settings_must_agree() {
        let base = [("host", "redis"), ("port", "6379"), ("tls_enabled", "true")];
        let with = |extra: (&str, &str)| {
            let mut pairs = base.to_vec();
            pairs.push(extra);
            settings(&pairs).unwrap().validate().map(|_| ())
        };
        assert!(
            with(("cert", "c.pem"))
                .unwrap_err()
                .contains("both cert and key")
        );
        assert!(
            with(("sni", "other"))
                .unwrap_err()
                .contains("differs from host")
        );
        assert!(with(("sni", "redis")).is_ok());
    }
}
