//! Whether Redis is answering. While it is not, calls are tried again at
//! most once per [`RETRY_AFTER`] and every other request runs as a cache
//! miss at once; the outage is logged when it starts and when it ends, not
//! once per request.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How long after a failed call the next one is tried.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The state of the connection to Redis.
#[derive(Debug, Default)]
pub(crate) struct Outage {
    /// When the last call failed, while Redis is not answering.
    failed_at: Mutex<Option<Instant>>,
}

impl Outage {
    /// Whether to skip Redis now: it failed less than [`RETRY_AFTER`] ago.
    pub fn skip(&self) -> bool {
        self.failed_at
            .lock()
            .is_some_and(|at| at.elapsed() < RETRY_AFTER)
    }

    /// Records a call that could not reach Redis.
    pub fn failed(&self, address: &str, why: &str) {
        let mut failed_at = self.failed_at.lock();
        if failed_at.is_none() {
            log::warn!(
                "Redis response cache at {address} is not answering ({why}); requests run \
                 without the cache until it answers"
            );
        }
        *failed_at = Some(Instant::now());
    }

    /// Records a call that reached Redis.
    pub fn answered(&self, address: &str) {
        let mut failed_at = self.failed_at.lock();
        if failed_at.take().is_some() {
            log::info!("Redis response cache at {address} is answering again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_only_shortly_after_a_failure() {
        let outage = Outage::default();
        assert!(!outage.skip());
        outage.failed("redis:6379", "refused");
        assert!(outage.skip());
        *outage.failed_at.lock() = Some(Instant::now() - RETRY_AFTER);
        assert!(!outage.skip(), "a retry is due");
        outage.answered("redis:6379");
        assert!(!outage.skip());
        assert!(outage.failed_at.lock().is_none());
    }
}
