//! Writing results: console lines and table, CSV, JSON, HTML with SVG plots.

pub mod analysis;
pub mod console;
pub mod csv;
pub mod html;
pub mod json;
pub mod svg;

use serde::Serialize;

use crate::results::PointResult;

/// Everything a report shows: the run's setup and its points.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub model: String,
    pub version: Option<String>,
    pub url: String,
    pub protocol: String,
    pub streaming: bool,
    /// The model answers each request with any number of responses.
    pub decoupled: bool,
    pub batch_size: u32,
    /// `concurrency` or `request_rate`.
    pub load_kind: String,
    pub distribution: Option<String>,
    pub percentile: Option<u8>,
    pub latency_threshold_ms: Option<f64>,
    pub points: Vec<PointResult>,
    /// Load of the highest-throughput point within the latency bound.
    pub best_load: Option<f64>,
    pub totals: RunTotals,
}

/// Counts over the whole run and what the tool itself cost.
#[derive(Debug, Clone, Serialize)]
pub struct RunTotals {
    /// Every inference request the tool sent.
    pub requests_sent: u64,
    /// The server's statistics delta over the same span, if known.
    pub server_requests: Option<u64>,
    pub errors: u64,
    pub wall_seconds: f64,
    pub tool_cpu_seconds: Option<f64>,
    /// Requests sent per CPU second of this tool.
    pub requests_per_tool_cpu_second: Option<f64>,
}
