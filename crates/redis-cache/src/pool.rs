//! A bounded pool of connections to Redis (Triton's `pool_size` and
//! `wait_timeout`): connections open on first need, go back to the pool
//! after a command, and are dropped when the connection fails.

use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use redis::{Client, Connection, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo};

use crate::{settings::RedisSettings, tls};

/// Why a command got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// Redis could not be reached: the connection failed or timed out, or
    /// no connection of the pool came free in time.
    Unreachable(String),
    /// Redis answered with an error.
    Refused(String),
}

/// Connections to one Redis server.
pub(crate) struct Pool {
    client: Client,
    size: usize,
    wait_timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    socket_timeout: Option<Duration>,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    idle: Vec<Connection>,
    /// Connections open, idle or in use.
    open: usize,
}

impl Pool {
    /// A pool for the server `settings` name; no connection opens yet.
    pub fn new(settings: &RedisSettings) -> Result<Self, String> {
        let (host, port) = settings.validate()?;
        let mut redis = RedisConnectionInfo::default().set_db(settings.db);
        if let Some(user) = &settings.user {
            redis = redis.set_username(user);
        }
        if let Some(password) = &settings.password {
            redis = redis.set_password(password);
        }
        let address = if settings.tls_enabled {
            ConnectionAddr::TcpTls {
                host: host.to_string(),
                port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(host.to_string(), port)
        };
        let info = address
            .into_connection_info()
            .map_err(|e| e.to_string())?
            .set_redis_settings(redis);
        let client = if settings.tls_enabled {
            Client::build_with_tls(info, tls::certificates(settings)?)
        } else {
            Client::open(info)
        }
        .map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            size: settings.pool_size,
            wait_timeout: settings.wait_timeout,
            connect_timeout: settings.connect_timeout,
            socket_timeout: settings.socket_timeout,
            state: Mutex::default(),
            freed: Condvar::new(),
        })
    }

    /// Runs `command` on a connection of the pool.
    pub fn call<T>(
        &self,
        command: impl FnOnce(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, CallError> {
        let mut connection = self.take()?;
        match command(&mut connection) {
            Ok(value) => {
                self.give_back(connection);
                Ok(value)
            }
            Err(e) if unreachable(&e) => {
                self.discard();
                Err(CallError::Unreachable(describe(&e)))
            }
            Err(e) => {
                self.give_back(connection);
                Err(CallError::Refused(describe(&e)))
            }
        }
    }

    /// An idle connection, a new one while fewer than `size` are open, or
    /// the first one given back within `wait_timeout`.
    fn take(&self) -> Result<Connection, CallError> {
        let deadline = self.wait_timeout.map(|wait| Instant::now() + wait);
        let mut state = self.state.lock();
        loop {
            if let Some(connection) = state.idle.pop() {
                return Ok(connection);
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                return self.open().inspect_err(|_| self.discard());
            }
            let timed_out = match deadline {
                Some(deadline) => self.freed.wait_until(&mut state, deadline).timed_out(),
                None => {
                    self.freed.wait(&mut state);
                    false
                }
            };
            if timed_out && state.idle.is_empty() {
                return Err(CallError::Unreachable(
                    "no connection of the pool came free within wait_timeout".into(),
                ));
            }
        }
    }

    fn open(&self) -> Result<Connection, CallError> {
        let failed = |e: redis::RedisError| CallError::Unreachable(describe(&e));
        let connection = match self.connect_timeout {
            Some(timeout) => self.client.get_connection_with_timeout(timeout),
            None => self.client.get_connection(),
        }
        .map_err(failed)?;
        connection
            .set_read_timeout(self.socket_timeout)
            .and_then(|()| connection.set_write_timeout(self.socket_timeout))
            .map_err(failed)?;
        Ok(connection)
    }

    fn give_back(&self, connection: Connection) {
        self.state.lock().idle.push(connection);
        self.freed.notify_one();
    }

    /// Forgets a connection that failed, making room for a new one.
    fn discard(&self) {
        self.state.lock().open -= 1;
        self.freed.notify_one();
    }
}

/// What went wrong, in words. A refused password reads as Redis's own
/// `WRONGPASS` (the client library drops the server's text), so that logs
/// and start-up errors say what Triton's say.
fn describe(e: &redis::RedisError) -> String {
    if e.kind() == redis::ErrorKind::AuthenticationFailed {
        format!("WRONGPASS: Redis refused the user name or password ({e})")
    } else {
        e.to_string()
    }
}

/// Whether `e` means the connection is unusable rather than an error reply.
fn unreachable(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal()
}
