//! Backends time their work in nanoseconds of the steady clock
//! (`std::chrono::steady_clock`, CLOCK_MONOTONIC on Linux); the core in
//! `Instant`s of the same clock.

use std::time::{Duration, Instant};

/// The steady clock now, in nanoseconds.
pub fn now_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

/// The `Instant` of the steady-clock time `ns`.
pub fn instant_of(ns: u64) -> Instant {
    let (now, now_ns) = (Instant::now(), now_ns());
    if ns <= now_ns {
        now.checked_sub(Duration::from_nanos(now_ns - ns))
            .unwrap_or(now)
    } else {
        now + Duration::from_nanos(ns - now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_read_in_nanoseconds_maps_back_to_about_the_same_instant() {
        let before = Instant::now();
        let at = instant_of(now_ns());
        let after = Instant::now();
        // Reading the two clocks one after the other costs well under a millisecond.
        assert!(at + Duration::from_millis(1) >= before && at <= after);
    }
}
