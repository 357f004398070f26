//! The server's own view of the load: cumulative counters of the statistics
//! extension, and the differences between two snapshots.

use oxiserve_client::proto::{ModelStatisticsResponse, StatisticDuration};

/// One duration counter: how many and how long in total.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Duration {
    pub count: u64,
    pub ns: u64,
}

/// A model's statistics (summed over the versions reported).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerStats {
    pub success: Duration,
    pub fail: Duration,
    pub queue: Duration,
    pub compute_input: Duration,
    pub compute_infer: Duration,
    pub compute_output: Duration,
    pub inference_count: u64,
    pub execution_count: u64,
}

impl ServerStats {
    /// The statistics of `model` in an answer of the statistics call, summed
    /// over the versions it lists.
    pub fn of(answer: &ModelStatisticsResponse, model: &str) -> ServerStats {
        let d = |d: Option<StatisticDuration>| {
            d.map_or(Duration::default(), |d| Duration {
                count: d.count,
                ns: d.ns,
            })
        };
        answer.model_stats.iter().filter(|m| m.name == model).fold(
            ServerStats::default(),
            |total, m| {
                let s = m.inference_stats.unwrap_or_default();
                total.plus(&ServerStats {
                    success: d(s.success),
                    fail: d(s.fail),
                    queue: d(s.queue),
                    compute_input: d(s.compute_input),
                    compute_infer: d(s.compute_infer),
                    compute_output: d(s.compute_output),
                    inference_count: m.inference_count,
                    execution_count: m.execution_count,
                })
            },
        )
    }

    /// Requests the server has finished: successes plus failures.
    pub fn requests(&self) -> u64 {
        self.success.count + self.fail.count
    }

    /// The counters of `self` minus those of an earlier snapshot.
    pub fn since(&self, earlier: &ServerStats) -> ServerStats {
        let d = |a: Duration, b: Duration| Duration {
            count: a.count.saturating_sub(b.count),
            ns: a.ns.saturating_sub(b.ns),
        };
        ServerStats {
            success: d(self.success, earlier.success),
            fail: d(self.fail, earlier.fail),
            queue: d(self.queue, earlier.queue),
            compute_input: d(self.compute_input, earlier.compute_input),
            compute_infer: d(self.compute_infer, earlier.compute_infer),
            compute_output: d(self.compute_output, earlier.compute_output),
            inference_count: self.inference_count.saturating_sub(earlier.inference_count),
            execution_count: self.execution_count.saturating_sub(earlier.execution_count),
        }
    }

    /// The sum of two sets of counters.
    pub fn plus(&self, other: &ServerStats) -> ServerStats {
        let d = |a: Duration, b: Duration| Duration {
            count: a.count + b.count,
            ns: a.ns + b.ns,
        };
        ServerStats {
            success: d(self.success, other.success),
            fail: d(self.fail, other.fail),
            queue: d(self.queue, other.queue),
            compute_input: d(self.compute_input, other.compute_input),
            compute_infer: d(self.compute_infer, other.compute_infer),
            compute_output: d(self.compute_output, other.compute_output),
            inference_count: self.inference_count + other.inference_count,
            execution_count: self.execution_count + other.execution_count,
        }
    }
}

/// Average microseconds per count of a duration counter.
pub fn average_us(d: Duration) -> f64 {
    if d.count == 0 {
        0.0
    } else {
        d.ns as f64 / d.count as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_client::proto::{InferStatistics, ModelStatistics};

    use super::*;

    fn answer(success: u64, queue_ns: u64) -> ModelStatisticsResponse {
        let d = |count, ns| Some(StatisticDuration { count, ns });
        let stats = InferStatistics {
            success: d(success, 10),
            fail: d(1, 0),
            queue: d(success, queue_ns),
            ..InferStatistics::default()
        };
        let model = |name: &str| ModelStatistics {
            name: name.into(),
            version: "1".into(),
            inference_count: success * 2,
            execution_count: success,
            inference_stats: Some(stats),
            ..ModelStatistics::default()
        };
        ModelStatisticsResponse {
            model_stats: vec![model("m"), model("other")],
        }
    }

    #[test]
    fn deltas_count_one_models_requests() {
        let before = ServerStats::of(&answer(3, 300), "m");
        let after = ServerStats::of(&answer(10, 2_400), "m");
        let delta = after.since(&before);
        assert_eq!(delta.requests(), 7);
        assert_eq!(delta.inference_count, 14);
        assert_eq!(average_us(delta.queue), 0.3);
        assert_eq!(ServerStats::of(&answer(1, 1), "x"), ServerStats::default());
    }
}
