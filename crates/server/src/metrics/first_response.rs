//! Triton's first-response histogram of decoupled models
//! (`nv_inference_first_response_histogram_ms`, Triton 2.52's family, on
//! with `--metrics-config histogram_latencies=true`).

use oxiserve_core::{FIRST_RESPONSE_BUCKETS_MS, HistogramSnapshot};

use super::{
    models::model_labels,
    text::{Buckets, Kind, TextWriter},
};

const NAME: &str = "nv_inference_first_response_histogram_ms";

/// One decoupled model version's histogram.
#[derive(Debug, Clone)]
pub struct FirstResponseSample {
    pub name: String,
    /// The model's namespace with `--model-namespacing`.
    pub namespace: Option<String>,
    pub version: i64,
    pub histogram: HistogramSnapshot,
}

/// Writes the family (when any model has the histogram).
pub fn write(w: &mut TextWriter, models: &[FirstResponseSample]) {
    if models.is_empty() {
        return;
    }
    w.family(
        NAME,
        "Duration from request to first response in milliseconds",
        Kind::Histogram,
    );
    let bounds = FIRST_RESPONSE_BUCKETS_MS.map(|b| b as f64);
    for m in models {
        let version = m.version.to_string();
        let labels = model_labels(&m.name, m.namespace.as_deref(), &version);
        let h = &m.histogram;
        let buckets = Buckets {
            bounds: &bounds,
            cumulative: &h.cumulative[..bounds.len()],
            count: h.count(),
            sum: h.sum as f64,
        };
        w.histogram(NAME, &labels, buckets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_family_has_tritons_buckets() {
        let sample = FirstResponseSample {
            name: "d".into(),
            namespace: None,
            version: 1,
            histogram: HistogramSnapshot {
                cumulative: vec![1, 1, 2, 2, 3],
                sum: 9000,
            },
        };
        let mut w = TextWriter::default();
        write(&mut w, &[sample]);
        assert_eq!(
            w.finish(),
            "# HELP nv_inference_first_response_histogram_ms Duration from request to first \
             response in milliseconds\n\
             # TYPE nv_inference_first_response_histogram_ms histogram\n\
             nv_inference_first_response_histogram_ms_count{model=\"d\",version=\"1\"} 3\n\
             nv_inference_first_response_histogram_ms_sum{model=\"d\",version=\"1\"} 9000\n\
             nv_inference_first_response_histogram_ms_bucket{model=\"d\",version=\"1\",le=\"100\"} 1\n\
             nv_inference_first_response_histogram_ms_bucket{model=\"d\",version=\"1\",le=\"500\"} 1\n\
             nv_inference_first_response_histogram_ms_bucket{model=\"d\",version=\"1\",le=\"2000\"} 2\n\
             nv_inference_first_response_histogram_ms_bucket{model=\"d\",version=\"1\",le=\"5000\"} 2\n\
             nv_inference_first_response_histogram_ms_bucket{model=\"d\",version=\"1\",le=\"+Inf\"} 3\n"
        );
    }
}
