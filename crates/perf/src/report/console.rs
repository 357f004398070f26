//! Console output: one perf_analyzer-style line per load level as it is
//! measured, and a table at the end.

use std::fmt::Write;

use super::Report;
use crate::results::PointResult;

/// Prints a line on stdout; a closed stdout (`| head`) is not an error.
pub fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// `Concurrency: 4, throughput: 1234.5 infer/sec, latency 800 usec`.
pub fn point_line(kind: &str, p: &PointResult) -> String {
    let mut line = format!(
        "{}: {}, throughput: {:.1} infer/sec, latency {:.0} usec",
        load_title(kind),
        format_load(p.load),
        p.throughput,
        p.judged_latency_us
    );
    if p.measured_responses != p.measured_requests {
        let _ = write!(line, ", {:.1} responses/sec", p.responses_per_second);
    }
    if !p.stable {
        line.push_str(" (not stable)");
    }
    if p.errors > 0 {
        let _ = write!(line, " ({} errors)", p.errors);
    }
    if p.late_requests > 0 {
        let _ = write!(
            line,
            " ({} requests left over 1 ms late: too few connections (--max-threads) or CPU)",
            p.late_requests
        );
    }
    line
}

fn load_title(kind: &str) -> &'static str {
    if kind == "request_rate" {
        "Request Rate"
    } else {
        "Concurrency"
    }
}

/// A load value without a needless fraction.
pub fn format_load(load: f64) -> String {
    if load.fract() == 0.0 {
        format!("{load:.0}")
    } else {
        format!("{load}")
    }
}

/// The summary table.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    // A decoupled model's responses per second follow its inferences.
    let responses = |text: String| {
        if report.decoupled {
            text
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "{:>12} {:>12}{} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7}",
        load_title(&report.load_kind),
        "infer/s",
        responses(format!(" {:>12}", "responses/s")),
        "avg us",
        "p50 us",
        "p90 us",
        "p95 us",
        "p99 us",
        "send us",
        "recv us",
        "queue us",
        "infer us",
        "errors"
    );
    for p in &report.points {
        let (queue, infer) = p.server.as_ref().map_or(("-".into(), "-".into()), |s| {
            (
                format!("{:.0}", s.queue_us),
                format!("{:.0}", s.compute_infer_us),
            )
        });
        let l = &p.latency_us;
        let _ = writeln!(
            out,
            "{:>12} {:>12.1}{} {:>9.0} {:>9} {:>9} {:>9} {:>9} {:>8.1} {:>8.1} {:>9} {:>9} {:>7}{}",
            format_load(p.load),
            p.throughput,
            responses(format!(" {:>12.1}", p.responses_per_second)),
            l.avg,
            l.p50,
            l.p90,
            l.p95,
            l.p99,
            p.client_send_us,
            p.client_recv_us,
            queue,
            infer,
            p.errors,
            if p.stable { "" } else { " unstable" }
        );
    }
    let t = &report.totals;
    let _ = write!(out, "requests sent: {}", t.requests_sent);
    if let Some(server) = t.server_requests {
        let _ = write!(out, ", counted by the server: {server}");
    }
    if let Some(cpu) = t.tool_cpu_seconds {
        let _ = write!(out, "; tool CPU: {cpu:.2} s in {:.1} s", t.wall_seconds);
    }
    out.push('\n');
    if let Some(best) = report.best_load {
        let _ = writeln!(
            out,
            "best within the latency bound: {} {}",
            load_title(&report.load_kind),
            format_load(best)
        );
    }
    out
}
