//! How long an idle instance thread polls its queue before it sleeps.
//!
//! Under load the next request comes within microseconds, so the thread
//! never pays for a sleep and a wake-up per request. With one client at a
//! time the next request comes a round trip later (tens to hundreds of
//! microseconds): a thread that slept by then costs that request a wake-up
//! on both sides. So the polling time follows the thread's waits: twice its
//! last wait, within [`MIN_SPIN`] and [`MAX_SPIN`]. A wait longer than
//! [`IDLE`] means the model is idle, and the next wait polls only
//! [`MIN_SPIN`], so an idle server spends (almost) nothing.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};

/// The shortest polling time: what a busy instance needs between jobs.
const MIN_SPIN: Duration = Duration::from_micros(50);
/// The longest: a round trip of one client on a loaded machine.
const MAX_SPIN: Duration = Duration::from_micros(300);
/// A wait this long means no client is waiting on the answer to send more.
const IDLE: Duration = Duration::from_micros(1200);

/// The polling state of one instance thread.
#[derive(Debug)]
pub(crate) struct IdlePolling {
    last_wait: Duration,
}

impl Default for IdlePolling {
    fn default() -> Self {
        Self {
            last_wait: Duration::MAX,
        }
    }
}

impl IdlePolling {
    /// How long the next wait polls before it sleeps.
    fn spin(&self) -> Duration {
        if self.last_wait > IDLE {
            MIN_SPIN
        } else {
            (self.last_wait * 2).clamp(MIN_SPIN, MAX_SPIN)
        }
    }

    /// The next item of `rx`, polling it (yielding the CPU between polls)
    /// before `sleep` blocks for it; `None` when `sleep` gives up.
    pub fn next<T>(&mut self, rx: &Receiver<T>, sleep: impl FnOnce() -> Option<T>) -> Option<T> {
        let start = Instant::now();
        let spin = self.spin();
        let item = loop {
            match rx.try_recv() {
                Ok(item) => break Some(item),
                Err(TryRecvError::Disconnected) => break None,
                Err(TryRecvError::Empty) if start.elapsed() >= spin => break sleep(),
                Err(TryRecvError::Empty) => std::thread::yield_now(),
            }
        };
        self.last_wait = start.elapsed();
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(wait_us: u64) -> Duration {
        IdlePolling {
            last_wait: Duration::from_micros(wait_us),
        }
        .spin()
    }

    #[test]
    fn polls_twice_the_last_wait_within_bounds() {
        assert_eq!(after(5), MIN_SPIN, "a busy instance polls the least");
        assert_eq!(after(100), Duration::from_micros(200));
        assert_eq!(after(400), MAX_SPIN);
        assert_eq!(after(5_000), MIN_SPIN, "an idle model polls the least");
        assert_eq!(IdlePolling::default().spin(), MIN_SPIN);
    }

    #[test]
    fn takes_what_is_queued_and_sleeps_for_what_is_not() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut polling = IdlePolling::default();
        tx.send(1).unwrap();
        assert_eq!(
            polling.next(&rx, || panic!("a queued item needs no sleep")),
            Some(1)
        );
        assert!(
            polling.last_wait < IDLE,
            "found at once: {:?}",
            polling.last_wait
        );
        assert_eq!(
            polling.next(&rx, || Some(2)),
            Some(2),
            "empty: polls, then sleeps"
        );
        drop(tx);
        assert_eq!(polling.next(&rx, || Some(3)), None, "disconnected");
    }
}
