//! Triton's per-model families (`nv_inference_*`), with Triton 2.51's names,
//! help texts, types and labels, from the core's statistics at scrape time.

use oxiserve_core::{FailureReason, ModelStatistics, StatDuration};

use super::text::{Kind, TextWriter};

/// One loaded model version as the metrics see it.
#[derive(Debug, Clone, Default)]
pub struct ModelSample {
    pub stats: ModelStatistics,
    pub pending: usize,
    /// The model's namespace with `--model-namespacing`.
    pub namespace: Option<String>,
    /// Whether the response cache serves the model: only then has it the
    /// `nv_cache_*` families, as in Triton.
    pub cached: bool,
}

impl ModelSample {
    fn version(&self) -> String {
        self.stats.version.to_string()
    }

    fn labels<'a>(&'a self, version: &'a str) -> Vec<(&'a str, &'a str)> {
        model_labels(&self.stats.name, self.namespace.as_deref(), version)
    }
}

/// The labels naming a model version in every per-model family: `model`,
/// `version` and, with `--model-namespacing`, Triton's `namespace`.
pub(super) fn model_labels<'a>(
    name: &'a str,
    namespace: Option<&'a str>,
    version: &'a str,
) -> Vec<(&'a str, &'a str)> {
    let mut labels = vec![("model", name), ("version", version)];
    if let Some(namespace) = namespace {
        labels.push(("namespace", namespace));
    }
    labels
}

/// A counter family of one value per model version.
struct PerModel {
    name: &'static str,
    help: &'static str,
    value: fn(&ModelStatistics) -> u64,
}

const COUNTS: [PerModel; 2] = [
    PerModel {
        name: "nv_inference_count",
        help: "Number of inferences performed (does not include cached requests)",
        value: |s| s.inference_count,
    },
    PerModel {
        name: "nv_inference_exec_count",
        help: "Number of model executions performed (does not include cached requests)",
        value: |s| s.execution_count,
    },
];

const LATENCY_COUNTERS: [PerModel; 5] = [
    PerModel {
        name: "nv_inference_request_duration_us",
        help: "Cumulative inference request duration in microseconds (includes cached requests)",
        value: |s| micros(s.inference_stats.success),
    },
    PerModel {
        name: "nv_inference_queue_duration_us",
        help: "Cumulative inference queuing duration in microseconds (includes cached requests)",
        value: |s| micros(s.inference_stats.queue),
    },
    PerModel {
        name: "nv_inference_compute_input_duration_us",
        help: "Cumulative compute input duration in microseconds (does not include cached requests)",
        value: |s| micros(s.inference_stats.compute_input),
    },
    PerModel {
        name: "nv_inference_compute_infer_duration_us",
        help: "Cumulative compute inference duration in microseconds (does not include cached requests)",
        value: |s| micros(s.inference_stats.compute_infer),
    },
    PerModel {
        name: "nv_inference_compute_output_duration_us",
        help: "Cumulative inference compute output duration in microseconds (does not include cached requests)",
        value: |s| micros(s.inference_stats.compute_output),
    },
];

/// Triton's per-model cache counters, written with the latency counters.
const CACHE_COUNTERS: [PerModel; 4] = [
    PerModel {
        name: "nv_cache_num_hits_per_model",
        help: "Number of cache hits per model",
        value: |s| s.inference_stats.cache_hit.count,
    },
    PerModel {
        name: "nv_cache_hit_duration_per_model",
        help: "Total cache hit duration per model, in microseconds",
        value: |s| micros(s.inference_stats.cache_hit),
    },
    PerModel {
        name: "nv_cache_num_misses_per_model",
        help: "Number of cache misses per model",
        value: |s| s.inference_stats.cache_miss.count,
    },
    PerModel {
        name: "nv_cache_miss_duration_per_model",
        help: "Total cache miss (insert+lookup) duration per model, in microseconds",
        value: |s| micros(s.inference_stats.cache_miss),
    },
];

fn micros(d: StatDuration) -> u64 {
    d.ns / 1000
}

/// Writes Triton's per-model counters; `latency_counters`
/// (`--metrics-config counter_latencies`) adds the cumulative duration
/// counters. Without them, as in Triton 2.51, the other counters stay at 0.
pub fn write_counters(w: &mut TextWriter, models: &[ModelSample], latency_counters: bool) {
    let counted = |value: u64| if latency_counters { value as f64 } else { 0.0 };
    write_counter(
        w,
        models,
        "nv_inference_request_success",
        "Number of successful inference requests, all batch sizes",
        |s| s.inference_stats.success.count,
        counted,
    );
    let failure = "nv_inference_request_failure";
    w.family(
        failure,
        "Number of failed inference requests, all batch sizes",
        Kind::Counter,
    );
    for m in models {
        let version = m.version();
        for reason in FailureReason::ALL {
            let mut labels = m.labels(&version);
            labels.push(("reason", reason.label()));
            w.sample(failure, &labels, counted(m.stats.failures.get(reason)));
        }
    }
    for family in &COUNTS {
        write_counter(w, models, family.name, family.help, family.value, counted);
    }
    if latency_counters {
        for family in &LATENCY_COUNTERS {
            write_counter(w, models, family.name, family.help, family.value, counted);
        }
        let cached: Vec<ModelSample> = models.iter().filter(|m| m.cached).cloned().collect();
        if !cached.is_empty() {
            for family in &CACHE_COUNTERS {
                write_counter(w, &cached, family.name, family.help, family.value, counted);
            }
        }
    }
}

/// Writes the pending-requests gauge of each model.
pub fn write_pending(w: &mut TextWriter, models: &[ModelSample]) {
    let pending = "nv_inference_pending_request_count";
    w.family(
        pending,
        "Instantaneous number of pending requests awaiting execution per-model.",
        Kind::Gauge,
    );
    for m in models {
        let version = m.version();
        w.sample(pending, &m.labels(&version), m.pending as f64);
    }
}

fn write_counter(
    w: &mut TextWriter,
    models: &[ModelSample],
    name: &str,
    help: &str,
    value: fn(&ModelStatistics) -> u64,
    counted: impl Fn(u64) -> f64,
) {
    w.family(name, help, Kind::Counter);
    for m in models {
        let version = m.version();
        w.sample(name, &m.labels(&version), counted(value(&m.stats)));
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_core::InferStatistics;

    use super::*;

    fn sample() -> ModelSample {
        ModelSample {
            stats: ModelStatistics {
                name: "ident".into(),
                version: 1,
                inference_count: 5,
                execution_count: 4,
                inference_stats: InferStatistics {
                    success: StatDuration {
                        count: 4,
                        ns: 55_958_999,
                    },
                    ..Default::default()
                },
                ..Default::default()
            },
            pending: 2,
            namespace: None,
            cached: false,
        }
    }

    fn render(latency_counters: bool) -> String {
        let mut w = TextWriter::default();
        write_counters(&mut w, &[sample()], latency_counters);
        write_pending(&mut w, &[sample()]);
        w.finish()
    }

    #[test]
    fn families_match_triton_2_51() {
        let text = render(true);
        for line in [
            "# HELP nv_inference_request_success Number of successful inference requests, all batch sizes",
            "# TYPE nv_inference_request_success counter",
            "nv_inference_request_success{model=\"ident\",version=\"1\"} 4",
            "nv_inference_request_failure{model=\"ident\",reason=\"OTHER\",version=\"1\"} 0",
            "nv_inference_request_failure{model=\"ident\",reason=\"REJECTED\",version=\"1\"} 0",
            "nv_inference_count{model=\"ident\",version=\"1\"} 5",
            "nv_inference_exec_count{model=\"ident\",version=\"1\"} 4",
            "nv_inference_request_duration_us{model=\"ident\",version=\"1\"} 55958",
            "# TYPE nv_inference_pending_request_count gauge",
            "nv_inference_pending_request_count{model=\"ident\",version=\"1\"} 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert_eq!(text.matches("# TYPE").count(), 10);
    }

    #[test]
    fn counter_latencies_false_drops_the_duration_counters_and_stops_the_others() {
        let text = render(false);
        assert!(!text.contains("_duration_us"), "{text}");
        assert_eq!(text.matches("# TYPE").count(), 5);
        for line in [
            "nv_inference_request_success{model=\"ident\",version=\"1\"} 0",
            "nv_inference_count{model=\"ident\",version=\"1\"} 0",
            "nv_inference_exec_count{model=\"ident\",version=\"1\"} 0",
            "nv_inference_pending_request_count{model=\"ident\",version=\"1\"} 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }

    #[test]
    fn cached_models_alone_have_the_cache_families() {
        let mut cached = sample();
        cached.cached = true;
        cached.stats.name = "cached".into();
        cached.stats.inference_stats.cache_hit = StatDuration {
            count: 3,
            ns: 7_000,
        };
        cached.stats.inference_stats.cache_miss = StatDuration {
            count: 1,
            ns: 2_000,
        };
        let mut w = TextWriter::default();
        write_counters(&mut w, &[sample(), cached], true);
        let text = w.finish();
        for line in [
            "nv_cache_num_hits_per_model{model=\"cached\",version=\"1\"} 3",
            "nv_cache_hit_duration_per_model{model=\"cached\",version=\"1\"} 7",
            "nv_cache_num_misses_per_model{model=\"cached\",version=\"1\"} 1",
            "nv_cache_miss_duration_per_model{model=\"cached\",version=\"1\"} 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("nv_cache_num_hits_per_model{model=\"ident\""));
    }

    #[test]
    fn a_namespaced_model_carries_triton_s_namespace_label() {
        let mut w = TextWriter::default();
        let namespaced = ModelSample {
            namespace: Some("/repos/a".into()),
            ..sample()
        };
        write_counters(&mut w, &[namespaced], true);
        let text = w.finish();
        for line in [
            "nv_inference_request_success{model=\"ident\",namespace=\"/repos/a\",version=\"1\"} 4",
            "nv_inference_request_failure{model=\"ident\",namespace=\"/repos/a\",reason=\"OTHER\",version=\"1\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
