//! The numbers reported for one load level, computed from its measured windows.

use serde::Serialize;

use crate::{
    measure::Measurement,
    recorder::Window,
    server_stats::{ServerStats, average_us},
};

/// Latency statistics of successful requests, in microseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Latency {
    pub avg: f64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
}

/// The server's breakdown over the reported windows: average microseconds
/// per request in each phase.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ServerBreakdown {
    pub requests: u64,
    pub inference_count: u64,
    pub execution_count: u64,
    pub queue_us: f64,
    pub compute_input_us: f64,
    pub compute_infer_us: f64,
    pub compute_output_us: f64,
}

/// One load level's result.
#[derive(Debug, Clone, Serialize)]
pub struct PointResult {
    /// Outstanding requests (closed loop) or requests per second (open loop).
    pub load: f64,
    pub stable: bool,
    /// Windows measured, the reported ones included.
    pub trials: u32,
    /// Every request sent at this level (warm-up and all windows included).
    pub requests_sent: u64,
    /// The server's count of requests over the same span (statistics delta).
    pub server_requests: Option<u64>,
    /// Requests answered in the reported windows.
    pub measured_requests: u64,
    /// Their responses (more than the requests from a decoupled model).
    pub measured_responses: u64,
    pub errors: u64,
    /// Open loop: requests that left more than 1 ms after their slot.
    pub late_requests: u64,
    /// Inferences (requests x batch size) per second.
    pub throughput: f64,
    pub requests_per_second: f64,
    /// Responses per second: several per request from a decoupled model.
    pub responses_per_second: f64,
    pub latency_us: Latency,
    /// The latency the level is judged by (the --percentile one, else the
    /// average), in microseconds.
    pub judged_latency_us: f64,
    pub client_send_us: f64,
    pub client_recv_us: f64,
    pub server: Option<ServerBreakdown>,
    pub first_error: Option<String>,
}

/// Span-wide counts that are not in the windows.
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    pub requests_sent: u64,
    pub server_requests: Option<u64>,
}

/// Merges the reported windows into a result.
pub fn summarize(
    load: f64,
    batch_size: u32,
    percentile: Option<u8>,
    measurement: &Measurement,
    totals: Totals,
) -> PointResult {
    let mut window = Window::default();
    let mut seconds = 0.0;
    let mut server: Option<ServerStats> = Some(ServerStats::default());
    for m in &measurement.windows {
        window.merge(&m.window);
        seconds += m.duration.as_secs_f64();
        server = server.zip(m.server).map(|(a, b)| a.plus(&b));
    }
    let per_request = |ns: u64| {
        if window.ok == 0 {
            0.0
        } else {
            ns as f64 / window.ok as f64 / 1000.0
        }
    };
    let h = &window.latency_us;
    let q = |p: f64| {
        if window.ok == 0 {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    let avg = per_request(window.latency_ns_sum);
    let per_second = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    let rps = per_second(window.ok);
    PointResult {
        load,
        stable: measurement.stable,
        trials: measurement.trials,
        requests_sent: totals.requests_sent,
        server_requests: totals.server_requests,
        measured_requests: window.ok,
        measured_responses: window.responses,
        errors: window.errors,
        late_requests: window.late,
        throughput: rps * f64::from(batch_size),
        requests_per_second: rps,
        responses_per_second: per_second(window.responses),
        latency_us: Latency {
            avg,
            min: if window.ok == 0 { 0 } else { h.min() },
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            max: h.max(),
        },
        judged_latency_us: percentile.map_or(avg, |p| q(f64::from(p) / 100.0) as f64),
        client_send_us: per_request(window.send_ns_sum),
        client_recv_us: per_request(window.recv_ns_sum),
        server: server
            .filter(|_| !measurement.windows.is_empty())
            .map(|s| breakdown(&s)),
        first_error: window.first_error.clone(),
    }
}

fn breakdown(s: &ServerStats) -> ServerBreakdown {
    ServerBreakdown {
        requests: s.requests(),
        inference_count: s.inference_count,
        execution_count: s.execution_count,
        queue_us: average_us(s.queue),
        compute_input_us: average_us(s.compute_input),
        compute_infer_us: average_us(s.compute_infer),
        compute_output_us: average_us(s.compute_output),
    }
}
