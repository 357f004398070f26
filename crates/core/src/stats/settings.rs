//! What a model's statistics record besides Triton's counters, as the
//! server's metrics settings ask.

use std::sync::Arc;

use crate::config::{Quantile, ServerConfig};

/// The latency metrics every model version records.
#[derive(Debug, Clone, Default)]
pub(crate) struct StatsSettings {
    /// oxiserve's latency histograms.
    pub histograms: bool,
    /// Triton's latency summaries, with these quantiles.
    pub summaries: Option<Arc<[Quantile]>>,
    /// Triton's first-response histogram (decoupled models only).
    pub first_response: bool,
}

impl StatsSettings {
    /// The settings `config` asks for.
    pub fn of(config: &ServerConfig) -> Self {
        Self {
            histograms: config.latency_histograms,
            summaries: config.latency_summaries.clone(),
            first_response: config.first_response_histogram,
        }
    }
}
