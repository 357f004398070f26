//! Whether a connection is answering a request, and since when it has not.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use parking_lot::Mutex;
use tokio::time::Instant;

/// The requests of one connection being answered now.
#[derive(Debug)]
pub(super) struct Activity {
    busy: AtomicUsize,
    /// When the last request ended (or the connection opened).
    last_end: Mutex<Instant>,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            busy: AtomicUsize::new(0),
            last_end: Mutex::new(Instant::now()),
        })
    }

    /// Marks a request as being answered until the guard drops.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Completes once no request has been answered for `quiet`, counted
    /// from no earlier than now.
    pub async fn idle_for(&self, quiet: Duration) {
        let from = Instant::now();
        while let Some(wait) = self.quiet_left(from, Instant::now(), quiet) {
            tokio::time::sleep(wait).await;
        }
    }

    /// How much longer to wait at `now` before the connection has been
    /// quiet for `quiet` since `from` or its last request; `None` once it
    /// has.
    fn quiet_left(&self, from: Instant, now: Instant, quiet: Duration) -> Option<Duration> {
        if self.busy.load(Ordering::Acquire) > 0 {
            return Some(quiet);
        }
        let since = (*self.last_end.lock()).max(from);
        quiet
            .checked_sub(now.saturating_duration_since(since))
            .filter(|left| !left.is_zero())
    }
}

/// A request being answered; see [`Activity::begin`].
#[derive(Debug)]
pub(super) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last_end.lock() = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: Duration = Duration::from_millis(500);

    #[test]
    fn quiet_is_counted_from_the_later_of_the_start_and_the_last_request() {
        let activity = Activity::new();
        let opened = *activity.last_end.lock();
        let from = opened + Duration::from_secs(10);
        let at = |ms| from + Duration::from_millis(ms);
        assert_eq!(activity.quiet_left(from, at(0), QUIET), Some(QUIET));
        assert_eq!(
            activity.quiet_left(from, at(200), QUIET),
            Some(Duration::from_millis(300))
        );
        assert_eq!(activity.quiet_left(from, at(500), QUIET), None);
        *activity.last_end.lock() = at(400);
        assert_eq!(
            activity.quiet_left(from, at(500), QUIET),
            Some(Duration::from_millis(400))
        );
        assert_eq!(activity.quiet_left(from, at(900), QUIET), None);
    }

    #[test]
    fn a_request_being_answered_is_never_quiet() {
        let activity = Activity::new();
        let from = Instant::now();
        let busy = activity.begin();
        let later = from + Duration::from_secs(60);
        assert_eq!(activity.quiet_left(from, later, QUIET), Some(QUIET));
        drop(busy);
        let ended = *activity.last_end.lock();
        assert_eq!(activity.quiet_left(from, ended, QUIET), Some(QUIET));
        assert_eq!(activity.quiet_left(from, ended + QUIET, QUIET), None);
    }
}
