//! The Redis store against a real `redis-server` (Debian's, installed by
//! scripts/tools.sh): inserts that only the first writer wins, lookups,
//! and an outage that turns calls into misses instead of errors.

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use oxiserve_core::{CacheStore, Inserted};
use oxiserve_redis_cache::{RedisCache, RedisSettings};

/// A `redis-server` on a free port, killed when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (scripts/tools.sh installs it: apt-get install redis-server)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    fn settings(&self) -> RedisSettings {
        RedisSettings {
            host: Some("127.0.0.1".into()),
            port: Some(self.port),
            ..RedisSettings::default()
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_first_insert_wins_and_lookups_find_it() {
    let redis = Redis::start();
    let one = RedisCache::connect(&redis.settings()).unwrap();
    let other = RedisCache::connect(&redis.settings()).unwrap();
    assert_eq!(one.lookup("k"), None);
    assert_eq!(one.insert("k", b"first".to_vec()), Inserted::Stored);
    assert_eq!(
        other.insert("k", b"second".to_vec()),
        Inserted::AlreadyExists
    );
    assert_eq!(other.lookup("k").as_deref(), Some(&b"first"[..]));
}

#[test]
fn an_outage_means_misses_not_errors() {
    let redis = Redis::start();
    let cache = RedisCache::connect(&redis.settings()).unwrap();
    assert_eq!(cache.insert("k", b"v".to_vec()), Inserted::Stored);
    drop(redis);
    assert_eq!(cache.lookup("k"), None);
    assert_eq!(cache.insert("j", b"v".to_vec()), Inserted::Unavailable);
}

#[test]
fn start_up_needs_an_answer() {
    let redis = Redis::start();
    let settings = redis.settings();
    drop(redis);
    let message = RedisCache::connect(&settings).unwrap_err();
    assert!(
        message.starts_with("Failed to initialize RedisCache: "),
        "{message}"
    );
}
