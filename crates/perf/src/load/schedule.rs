//! Open-loop send times: constant or Poisson (exponential gaps), as offsets
//! from the start, precomputed for one period and repeated.

use std::time::Duration;

use crate::cli::Distribution;

/// Slots per precomputed period (at most).
const MAX_SLOTS: usize = 1 << 20;

/// When each request is due.
#[derive(Debug, Clone)]
pub struct Schedule {
    offsets_ns: Vec<u64>,
    period_ns: u64,
}

impl Schedule {
    /// A schedule of `rate` requests per second.
    pub fn new(rate: f64, distribution: Distribution) -> Schedule {
        let gap_ns = 1e9 / rate;
        // About 10 s of slots: long enough that repetition does not show.
        let slots = ((rate * 10.0) as usize).clamp(1, MAX_SLOTS);
        let mut offsets_ns = Vec::with_capacity(slots);
        let mut t = 0.0;
        for _ in 0..slots {
            offsets_ns.push(t as u64);
            t += match distribution {
                Distribution::Constant => gap_ns,
                // Inverse transform sampling; 1 - u lies in (0, 1].
                Distribution::Poisson => -(1.0 - fastrand::f64()).ln() * gap_ns,
            };
        }
        Schedule {
            offsets_ns,
            period_ns: t as u64,
        }
    }

    /// When slot `i` is due, from the start.
    pub fn at(&self, i: u64) -> Duration {
        let n = self.offsets_ns.len() as u64;
        Duration::from_nanos((i / n) * self.period_ns + self.offsets_ns[(i % n) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_slots_are_evenly_spaced() {
        let s = Schedule::new(1000.0, Distribution::Constant);
        assert_eq!(s.at(0), Duration::ZERO);
        assert_eq!(s.at(1), Duration::from_millis(1));
        assert_eq!(s.at(25_000), Duration::from_secs(25));
    }

    #[test]
    fn poisson_slots_keep_the_mean_rate() {
        let s = Schedule::new(1000.0, Distribution::Poisson);
        let mean_gap = s.at(10_000).as_secs_f64() / 10_000.0;
        assert!((mean_gap - 0.001).abs() < 0.0001, "{mean_gap}");
        assert!((1..100).all(|i| s.at(i) >= s.at(i - 1)));
    }
}
