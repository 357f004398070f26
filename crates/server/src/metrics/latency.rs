//! oxiserve's own families (prefix `oxi_`, so they never clash with
//! Triton's): latency histograms per model version and load times.
//!
//! | family | type | what |
//! | --- | --- | --- |
//! | `oxi_inference_request_duration_us` | histogram | arrival to final response of successful requests |
//! | `oxi_inference_queue_duration_us` | histogram | time queued before execution |
//! | `oxi_inference_compute_infer_duration_us` | histogram | the model's compute time |
//! | `oxi_model_load_duration_seconds` | gauge | how long the version took to load |

use std::time::Duration;

use oxiserve_core::{HistogramSnapshot, LATENCY_BUCKETS_US, LatencySnapshot};

use super::{
    models::model_labels,
    text::{Buckets, Kind, TextWriter},
};

/// A loaded model version's own metrics.
#[derive(Debug, Clone, Default)]
pub struct LatencySample {
    pub name: String,
    /// The model's namespace with `--model-namespacing`.
    pub namespace: Option<String>,
    pub version: i64,
    /// `None` when histograms are off.
    pub histograms: Option<LatencySnapshot>,
    pub load_duration: Duration,
}

type Pick = fn(&LatencySnapshot) -> &HistogramSnapshot;

const HISTOGRAMS: [(&str, &str, Pick); 3] = [
    (
        "oxi_inference_request_duration_us",
        "Histogram of successful inference request durations (arrival to final response) in microseconds",
        |h| &h.request,
    ),
    (
        "oxi_inference_queue_duration_us",
        "Histogram of inference queuing durations of successful requests in microseconds",
        |h| &h.queue,
    ),
    (
        "oxi_inference_compute_infer_duration_us",
        "Histogram of compute inference durations of successful requests in microseconds",
        |h| &h.compute_infer,
    ),
];

/// Writes the histograms (when any model has them) and the load-time gauge.
pub fn write(w: &mut TextWriter, models: &[LatencySample]) {
    if models.iter().any(|m| m.histograms.is_some()) {
        for (name, help, pick) in HISTOGRAMS {
            write_histogram(w, models, name, help, pick);
        }
    }
    let load = "oxi_model_load_duration_seconds";
    w.family(
        load,
        "Time taken to load the model version (backend load and instance creation), in seconds",
        Kind::Gauge,
    );
    for m in models {
        let version = m.version.to_string();
        let labels = model_labels(&m.name, m.namespace.as_deref(), &version);
        w.sample(load, &labels, m.load_duration.as_secs_f64());
    }
}

fn write_histogram(
    w: &mut TextWriter,
    models: &[LatencySample],
    name: &str,
    help: &str,
    pick: Pick,
) {
    w.family(name, help, Kind::Histogram);
    let bounds = LATENCY_BUCKETS_US.map(|b| b as f64);
    for m in models {
        let Some(h) = m.histograms.as_ref().map(pick) else {
            continue;
        };
        let version = m.version.to_string();
        let labels = model_labels(&m.name, m.namespace.as_deref(), &version);
        let buckets = Buckets {
            bounds: &bounds,
            cumulative: &h.cumulative[..bounds.len()],
            count: h.count(),
            sum: h.sum as f64,
        };
        w.histogram(name, &labels, buckets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(counts: &[u64], sum_us: u64) -> HistogramSnapshot {
        let mut cumulative = vec![0; LATENCY_BUCKETS_US.len() + 1];
        let mut total = 0;
        for (i, c) in counts.iter().enumerate() {
            total += c;
            cumulative[i] = total;
        }
        for slot in cumulative.iter_mut().skip(counts.len()) {
            *slot = total;
        }
        HistogramSnapshot {
            cumulative,
            sum: sum_us,
        }
    }

    #[test]
    fn histograms_have_cumulative_buckets_sum_and_count() {
        let h = histogram(&[1, 0, 2], 400);
        let sample = LatencySample {
            name: "m".into(),
            namespace: None,
            version: 2,
            histograms: Some(LatencySnapshot {
                request: h.clone(),
                queue: h.clone(),
                compute_infer: h,
            }),
            load_duration: Duration::from_millis(1500),
        };
        let mut w = TextWriter::default();
        write(&mut w, &[sample]);
        let text = w.finish();
        for line in [
            "# TYPE oxi_inference_request_duration_us histogram",
            "oxi_inference_request_duration_us_bucket{model=\"m\",version=\"2\",le=\"50\"} 1",
            "oxi_inference_request_duration_us_bucket{model=\"m\",version=\"2\",le=\"100\"} 1",
            "oxi_inference_request_duration_us_bucket{model=\"m\",version=\"2\",le=\"250\"} 3",
            "oxi_inference_request_duration_us_bucket{model=\"m\",version=\"2\",le=\"+Inf\"} 3",
            "oxi_inference_request_duration_us_sum{model=\"m\",version=\"2\"} 400",
            "oxi_inference_request_duration_us_count{model=\"m\",version=\"2\"} 3",
            "oxi_model_load_duration_seconds{model=\"m\",version=\"2\"} 1.5",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert_eq!(
            text.matches("_bucket{").count(),
            3 * (LATENCY_BUCKETS_US.len() + 1)
        );
    }

    #[test]
    fn histograms_off_leaves_only_load_times() {
        let mut w = TextWriter::default();
        write(&mut w, &[LatencySample::default()]);
        let text = w.finish();
        assert!(!text.contains("histogram"), "{text}");
        assert!(text.contains("oxi_model_load_duration_seconds"));
    }
}
