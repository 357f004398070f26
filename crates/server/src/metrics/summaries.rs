//! Triton's latency summaries (`--metrics-config summary_latencies=true`):
//! `nv_inference_*_summary_us`, with Triton 2.51's names and help texts
//! (three of which it words as its counters').

use oxiserve_core::{SummariesSnapshot, SummarySnapshot};

use super::{
    models::model_labels,
    text::{Kind, Quantiles, TextWriter},
};

/// One model version's summaries.
#[derive(Debug, Clone)]
pub struct SummarySample {
    pub name: String,
    /// The model's namespace with `--model-namespacing`.
    pub namespace: Option<String>,
    pub version: i64,
    pub summaries: SummariesSnapshot,
}

type Pick = fn(&SummariesSnapshot) -> &SummarySnapshot;

const FAMILIES: [(&str, &str, Pick); 5] = [
    (
        "nv_inference_request_summary_us",
        "Summary of inference request duration in microseconds (includes cached requests)",
        |s| &s.request,
    ),
    (
        "nv_inference_queue_summary_us",
        "Summary of inference queuing duration in microseconds (includes cached requests)",
        |s| &s.queue,
    ),
    (
        "nv_inference_compute_input_summary_us",
        "Cumulative compute input duration in microseconds (does not include cached requests)",
        |s| &s.compute_input,
    ),
    (
        "nv_inference_compute_infer_summary_us",
        "Cumulative compute inference duration in microseconds (does not include cached requests)",
        |s| &s.compute_infer,
    ),
    (
        "nv_inference_compute_output_summary_us",
        "Cumulative inference compute output duration in microseconds (does not include cached requests)",
        |s| &s.compute_output,
    ),
];

/// Writes the five summary families (when any model has summaries).
pub fn write(w: &mut TextWriter, models: &[SummarySample]) {
    if models.is_empty() {
        return;
    }
    for (name, help, pick) in FAMILIES {
        w.family(name, help, Kind::Summary);
        for m in models {
            let version = m.version.to_string();
            let labels = model_labels(&m.name, m.namespace.as_deref(), &version);
            let summary = pick(&m.summaries);
            let quantiles = Quantiles {
                estimates: &summary.estimates,
                count: summary.count,
                sum: summary.sum,
            };
            w.summary(name, &labels, quantiles);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_have_count_sum_and_quantiles() {
        let one = SummarySnapshot {
            count: 2,
            sum: 130.0,
            estimates: vec![(0.5, 11.0), (0.999, 11.0)],
        };
        let sample = SummarySample {
            name: "m".into(),
            namespace: None,
            version: 1,
            summaries: SummariesSnapshot {
                queue: one,
                ..Default::default()
            },
        };
        let mut w = TextWriter::default();
        write(&mut w, &[sample]);
        let text = w.finish();
        for line in [
            "# TYPE nv_inference_queue_summary_us summary",
            "nv_inference_queue_summary_us_count{model=\"m\",version=\"1\"} 2",
            "nv_inference_queue_summary_us_sum{model=\"m\",version=\"1\"} 130",
            "nv_inference_queue_summary_us{model=\"m\",version=\"1\",quantile=\"0.5\"} 11",
            "nv_inference_queue_summary_us{model=\"m\",version=\"1\",quantile=\"0.999\"} 11",
            "nv_inference_request_summary_us_count{model=\"m\",version=\"1\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert_eq!(text.matches("# TYPE").count(), 5);
        let mut w = TextWriter::default();
        write(&mut w, &[]);
        assert!(w.finish().is_empty());
    }
}
