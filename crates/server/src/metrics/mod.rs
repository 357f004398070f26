//! Prometheus metrics: Triton's `nv_*` families, the custom families
//! backends register, and oxiserve's `oxi_*` histograms, all rendered by one
//! [`Registry`] at scrape time. Families come in Triton's order: counters,
//! gauges, histograms, summaries (Triton's own before custom ones of the
//! same type), then oxiserve's.

mod custom;
mod first_response;
mod latency;
mod models;
mod settings;
mod summaries;
mod system;
mod text;

use std::sync::Arc;

use oxiserve_backend::metrics::MetricKind;
use oxiserve_core::Server;

pub use settings::MetricsSettings;
use system::{SystemGauges, write_pinned_memory};
use text::TextWriter;

/// Every metric the server exposes: counters, summaries and histograms read
/// from the core's statistics at scrape time, the custom families of its
/// models, the pinned memory pool's gauges (a pool of the size asked for,
/// never used), CPU and memory gauges refreshed by [`Registry::poll_system`].
#[derive(Debug, Clone)]
pub struct Registry {
    server: Server,
    settings: MetricsSettings,
    system: Arc<SystemGauges>,
}

impl Registry {
    /// A registry over `server`'s models.
    pub fn new(server: Server, settings: MetricsSettings) -> Self {
        Self {
            server,
            settings,
            system: Arc::default(),
        }
    }

    /// The settings it was made with.
    pub fn settings(&self) -> &MetricsSettings {
        &self.settings
    }

    /// Refreshes the CPU and memory gauges.
    pub fn poll_system(&self) {
        self.system.poll();
    }

    /// The text of one scrape.
    pub fn render(&self) -> String {
        let loaded = self.server.loaded_models();
        let mut model_samples = Vec::with_capacity(loaded.len());
        let mut latency_samples = Vec::with_capacity(loaded.len());
        let mut summary_samples = Vec::new();
        let mut first_responses = Vec::new();
        for m in &loaded {
            let (name, version) = (m.name().to_string(), m.version());
            let namespace = m.namespace().map(str::to_string);
            let latency = m.latency();
            model_samples.push(models::ModelSample {
                stats: m.statistics(),
                pending: m.pending_requests(),
                namespace: namespace.clone(),
                cached: m.is_cached(),
            });
            if let Some(summaries) = latency.summaries {
                summary_samples.push(summaries::SummarySample {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    version,
                    summaries,
                });
            }
            if let Some(histogram) = latency.first_response {
                first_responses.push(first_response::FirstResponseSample {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    version,
                    histogram,
                });
            }
            latency_samples.push(latency::LatencySample {
                name,
                namespace,
                version,
                histograms: latency.histograms,
                load_duration: m.load_duration(),
            });
        }
        let custom = self.server.manager().custom_metrics().snapshot();
        let mut w = TextWriter::default();
        models::write_counters(&mut w, &model_samples, self.settings.counter_latencies);
        custom::write(&mut w, &custom, MetricKind::Counter);
        models::write_pending(&mut w, &model_samples);
        write_pinned_memory(&mut w, self.settings.pinned_memory_pool_bytes);
        if self.settings.cpu_metrics {
            self.system.write(&mut w);
        }
        custom::write(&mut w, &custom, MetricKind::Gauge);
        first_response::write(&mut w, &first_responses);
        custom::write(&mut w, &custom, MetricKind::Histogram);
        summaries::write(&mut w, &summary_samples);
        latency::write(&mut w, &latency_samples);
        w.finish()
    }
}
