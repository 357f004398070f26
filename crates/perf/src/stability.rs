//! perf_analyzer's stability rule: a load level is measured once its last
//! windows agree, in throughput and in latency, within a percentage.

/// Windows that must agree.
pub const STABLE_WINDOWS: usize = 3;

/// What one window is judged by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSummary {
    /// Responses per second.
    pub throughput: f64,
    /// Average latency, or the chosen percentile, in microseconds.
    pub latency_us: f64,
}

/// Whether the last [`STABLE_WINDOWS`] windows each lie within `percentage`
/// percent of their mean, in both throughput and latency. Windows without
/// responses are never stable.
pub fn is_stable(windows: &[WindowSummary], percentage: f64) -> bool {
    if windows.len() < STABLE_WINDOWS {
        return false;
    }
    let last = &windows[windows.len() - STABLE_WINDOWS..];
    if last.iter().any(|w| w.throughput <= 0.0) {
        return false;
    }
    let within = |values: [f64; STABLE_WINDOWS]| {
        let mean = values.iter().sum::<f64>() / STABLE_WINDOWS as f64;
        values
            .iter()
            .all(|v| (v - mean).abs() <= mean * percentage / 100.0)
    };
    within([last[0].throughput, last[1].throughput, last[2].throughput])
        && within([last[0].latency_us, last[1].latency_us, last[2].latency_us])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(throughput: f64, latency_us: f64) -> WindowSummary {
        WindowSummary {
            throughput,
            latency_us,
        }
    }

    #[test]
    fn three_close_windows_are_stable() {
        assert!(is_stable(
            &[w(1.0, 1.0), w(100.0, 50.0), w(105.0, 52.0), w(98.0, 49.0)],
            10.0
        ));
    }

    #[test]
    fn too_few_or_spread_windows_are_not() {
        assert!(!is_stable(&[w(100.0, 50.0), w(100.0, 50.0)], 10.0));
        assert!(!is_stable(
            &[w(100.0, 50.0), w(130.0, 50.0), w(100.0, 50.0)],
            10.0
        ));
        assert!(!is_stable(
            &[w(100.0, 50.0), w(100.0, 80.0), w(100.0, 50.0)],
            10.0
        ));
        assert!(!is_stable(&[w(0.0, 0.0), w(0.0, 0.0), w(0.0, 0.0)], 10.0));
    }
}
