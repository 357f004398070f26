//! Prometheus metrics: Triton's `nv_*` families plus oxiserve's `oxi_*`
//! histograms, all rendered by one [`Registry`] at scrape time.

mod latency;
mod models;
mod settings;
mod system;
mod text;

use std::sync::Arc;

use oxiserve_core::Server;

pub use settings::MetricsSettings;
use system::{SystemGauges, write_pinned_memory};
use text::TextWriter;

/// Every metric the server exposes: counters read from the core's statistics
/// at scrape time, the pinned memory pool's gauges (a pool of the size asked
/// for, never used), CPU and memory gauges refreshed by
/// [`Registry::poll_system`].
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
        let model_samples: Vec<models::ModelSample> = loaded
            .iter()
            .map(|m| models::ModelSample {
                stats: m.statistics(),
                pending: m.pending_requests(),
            })
            .collect();
        let latency_samples: Vec<latency::LatencySample> = loaded
            .iter()
            .map(|m| latency::LatencySample {
                name: m.name().to_string(),
                version: m.version(),
                histograms: m.latency(),
                load_duration: m.load_duration(),
            })
            .collect();
        let mut w = TextWriter::default();
        models::write(&mut w, &model_samples, self.settings.counter_latencies);
        write_pinned_memory(&mut w, self.settings.pinned_memory_pool_bytes);
        if self.settings.cpu_metrics {
            self.system.write(&mut w);
        }
        latency::write(&mut w, &latency_samples);
        w.finish()
    }
}
