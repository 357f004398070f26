//! The server's own view of the load: cumulative counters of the statistics
//! extension, and the differences between two snapshots.

use serde_json::Value;

use crate::error::{Error, Result};

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
    /// From the JSON of `GET /v2/models/M[/versions/V]/stats`: the entries named `model`.
    pub fn from_json(value: &Value, model: &str) -> Result<ServerStats> {
        let entries = value["model_stats"]
            .as_array()
            .ok_or_else(|| Error::new("statistics answer has no model_stats"))?;
        let mut total = ServerStats::default();
        for entry in entries.iter().filter(|e| e["name"] == model) {
            let stats = &entry["inference_stats"];
            let d = |key: &str| Duration {
                count: number(&stats[key]["count"]),
                ns: number(&stats[key]["ns"]),
            };
            total = total.plus(&ServerStats {
                success: d("success"),
                fail: d("fail"),
                queue: d("queue"),
                compute_input: d("compute_input"),
                compute_infer: d("compute_infer"),
                compute_output: d("compute_output"),
                inference_count: number(&entry["inference_count"]),
                execution_count: number(&entry["execution_count"]),
            });
        }
        Ok(total)
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

/// Counters are JSON numbers (oxiserve, Triton) or decimal strings (the
/// protobuf JSON mapping of uint64).
fn number(value: &Value) -> u64 {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(0)
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
    use serde_json::json;

    use super::*;

    fn answer(success: u64, queue_ns: u64) -> Value {
        let d = |count, ns| json!({"count": count, "ns": ns});
        json!({"model_stats": [
            {"name": "m", "version": "1", "inference_count": success * 2, "execution_count": success,
             "inference_stats": {"success": d(success, 10), "fail": d(1, 0), "queue": d(success, queue_ns),
                "compute_input": d(success, 0), "compute_infer": d(success, 0), "compute_output": d(success, 0)}},
            {"name": "other", "version": "1", "inference_count": "5", "inference_stats": {}}
        ]})
    }

    #[test]
    fn deltas_count_one_models_requests() {
        let before = ServerStats::from_json(&answer(3, 300), "m").unwrap();
        let after = ServerStats::from_json(&answer(10, 2_400), "m").unwrap();
        let delta = after.since(&before);
        assert_eq!(delta.requests(), 7);
        assert_eq!(delta.inference_count, 14);
        assert_eq!(average_us(delta.queue), 0.3);
        assert_eq!(number(&json!("5")), 5);
        assert!(ServerStats::from_json(&json!({}), "m").is_err());
    }
}
