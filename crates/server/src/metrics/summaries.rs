//! Triton's latency summaries (`--metrics-config summary_latencies=true`):
//! `nv_inference_*_summary_us`, and `nv_cache_{hit,miss}_summary_per_model`
//! for models with the response cache (which have no request summary, as in
//! Triton), with Triton 2.51's names and help texts (three of which it words
//! as its counters').

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

type Pick = fn(&SummariesSnapshot) -> Option<&SummarySnapshot>;

const FAMILIES: [(&str, &str, Pick); 7] = [
    (
        "nv_inference_request_summary_us",
        "Summary of inference request duration in microseconds (includes cached requests)",
        |s| s.request.as_ref(),
    ),
    (
        "nv_inference_queue_summary_us",
        "Summary of inference queuing duration in microseconds (includes cached requests)",
        |s| Some(&s.queue),
    ),
    (
        "nv_inference_compute_input_summary_us",
        "Cumulative compute input duration in microseconds (does not include cached requests)",
        |s| Some(&s.compute_input),
    ),
    (
        "nv_inference_compute_infer_summary_us",
        "Cumulative compute inference duration in microseconds (does not include cached requests)",
        |s| Some(&s.compute_infer),
    ),
    (
        "nv_inference_compute_output_summary_us",
        "Cumulative inference compute output duration in microseconds (does not include cached requests)",
        |s| Some(&s.compute_output),
    ),
    (
        "nv_cache_hit_summary_per_model",
        "Summary of cache hit counts/durations per model, in microseconds.",
        |s| s.cache_hit.as_ref(),
    ),
    (
        "nv_cache_miss_summary_per_model",
        "Summary of cache miss counts/durations per model, in microseconds.",
        |s| s.cache_miss.as_ref(),
    ),
];

/// Writes the summary families that some model has.
pub fn write(w: &mut TextWriter, models: &[SummarySample]) {
    for (name, help, pick) in FAMILIES {
        let mut present = models
            .iter()
            .filter_map(|m| Some((m, pick(&m.summaries)?)))
            .peekable();
        if present.peek().is_none() {
            continue;
        }
        w.family(name, help, Kind::Summary);
        for (m, summary) in present {
            let version = m.version.to_string();
            let labels = model_labels(&m.name, m.namespace.as_deref(), &version);
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
                request: Some(SummarySnapshot::default()),
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
        assert_eq!(text.matches("# TYPE").count(), 5, "no cache summaries");
        let mut w = TextWriter::default();
        write(&mut w, &[]);
        assert!(w.finish().is_empty());
    }

    #[test]
    fn cached_models_have_cache_summaries_instead_of_the_request_one() {
        let hits = SummarySnapshot {
            count: 3,
            sum: 12.0,
            estimates: vec![(0.5, 4.0)],
        };
        let sample = SummarySample {
            name: "cached".into(),
            namespace: None,
            version: 1,
            summaries: SummariesSnapshot {
                cache_hit: Some(hits),
                cache_miss: Some(SummarySnapshot::default()),
                ..Default::default()
            },
        };
        let mut w = TextWriter::default();
        write(&mut w, &[sample]);
        let text = w.finish();
        assert!(!text.contains("nv_inference_request_summary_us"), "{text}");
        for line in [
            "# TYPE nv_cache_hit_summary_per_model summary",
            "nv_cache_hit_summary_per_model_count{model=\"cached\",version=\"1\"} 3",
            "nv_cache_hit_summary_per_model{model=\"cached\",version=\"1\",quantile=\"0.5\"} 4",
            "nv_cache_miss_summary_per_model_count{model=\"cached\",version=\"1\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
