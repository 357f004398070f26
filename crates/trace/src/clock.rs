//! Triton's trace clock: nanoseconds of the steady (monotonic) clock; and
//! the wall-clock times OpenTelemetry spans carry.

use std::{
    sync::LazyLock,
    time::{Instant, SystemTime},
};

use rustix::time::{ClockId, clock_gettime};

/// An instant and the steady clock's nanoseconds then, read together once.
static STEADY_BASE: LazyLock<(Instant, u64)> = LazyLock::new(|| {
    let now = clock_gettime(ClockId::Monotonic);
    let instant = Instant::now();
    let ns = now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64;
    (instant, ns)
});

/// The steady clock's nanoseconds at `at`, as Triton's timestamps count.
pub(crate) fn steady_ns(at: Instant) -> u64 {
    let (base, ns) = *STEADY_BASE;
    if at >= base {
        ns + (at - base).as_nanos() as u64
    } else {
        ns.saturating_sub((base - at).as_nanos() as u64)
    }
}

/// Wall-clock times of instants, from one reading of both clocks (as
/// Triton's OpenTelemetry mode takes one per trace).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WallClock {
    instant: Instant,
    system: SystemTime,
}

impl WallClock {
    pub fn now() -> Self {
        Self {
            instant: Instant::now(),
            system: SystemTime::now(),
        }
    }

    /// The wall-clock time at `at`.
    pub fn at(&self, at: Instant) -> SystemTime {
        if at >= self.instant {
            self.system + (at - self.instant)
        } else {
            self.system - (self.instant - at)
        }
    }
}
