//! Timestamps as the statistics functions take them: nanoseconds of the
//! steady clock (`CLOCK_MONOTONIC`, which `std::time::Instant` reads too).

use std::{sync::OnceLock, time::Instant};

/// An instant as steady-clock nanoseconds.
pub(crate) fn nanos(at: Instant) -> u64 {
    let (origin, origin_ns) = *ORIGIN.get_or_init(|| (Instant::now(), monotonic_ns()));
    match at.checked_duration_since(origin) {
        Some(after) => origin_ns + after.as_nanos() as u64,
        None => origin_ns.saturating_sub(origin.duration_since(at).as_nanos() as u64),
    }
}

/// One instant and its steady-clock reading, to convert the others.
static ORIGIN: OnceLock<(Instant, u64)> = OnceLock::new();

fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `now`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}
