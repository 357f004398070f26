//! The HTML report (`--html FILE`): one self-contained page (inline CSS and
//! SVG, no scripts) with the plots a person wants first, the setup and the
//! result table.

use std::fmt::Write;

use super::{
    Report,
    console::format_load,
    svg::{Chart, Series, escape},
};

const COLORS: [&str; 5] = ["#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#7f7f7f"];

/// The page.
pub fn render(report: &Report) -> String {
    let load_name = if report.load_kind == "request_rate" {
        "Request rate (requests/s)"
    } else {
        "Concurrency"
    };
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>oxiserve-perf: {model}</title>\
         <style>body{{font-family:sans-serif;margin:24px;color:#222}}\
         table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}\
         .plots{{display:flex;flex-wrap:wrap;gap:16px}}.meta td{{text-align:left}}</style></head><body>\
         <h1>oxiserve-perf: {model}</h1>",
        model = escape(&report.model)
    );
    page.push_str(&setup_table(report));
    page.push_str("<div class=\"plots\">");
    page.push_str(&throughput_chart(report, load_name).render());
    page.push_str(&latency_chart(report).render());
    page.push_str("</div>");
    page.push_str(&results_table(report, load_name));
    page.push_str("</body></html>\n");
    page
}

fn throughput_chart(report: &Report, load_name: &str) -> Chart {
    Chart {
        id: "throughput-plot".into(),
        title: match report.load_kind.as_str() {
            "request_rate" => "Throughput vs request rate".into(),
            _ => "Throughput vs concurrency".into(),
        },
        x_label: load_name.into(),
        y_label: "Throughput (infer/s)".into(),
        series: vec![Series {
            name: "infer/s".into(),
            color: COLORS[0],
            points: report
                .points
                .iter()
                .map(|p| (p.load, p.throughput))
                .collect(),
        }],
    }
}

fn latency_chart(report: &Report) -> Chart {
    let mut points: Vec<_> = report.points.iter().collect();
    points.sort_by(|a, b| a.throughput.total_cmp(&b.throughput));
    let series = |name: &str, color, f: &dyn Fn(&crate::results::PointResult) -> f64| Series {
        name: name.into(),
        color,
        points: points.iter().map(|p| (p.throughput, f(p))).collect(),
    };
    Chart {
        id: "latency-plot".into(),
        title: "Latency percentiles vs throughput".into(),
        x_label: "Throughput (infer/s)".into(),
        y_label: "Latency (us)".into(),
        series: vec![
            series("p50", COLORS[1], &|p| p.latency_us.p50 as f64),
            series("p90", COLORS[2], &|p| p.latency_us.p90 as f64),
            series("p95", COLORS[3], &|p| p.latency_us.p95 as f64),
            series("p99", COLORS[0], &|p| p.latency_us.p99 as f64),
            series("avg", COLORS[4], &|p| p.latency_us.avg),
        ],
    }
}

fn setup_table(report: &Report) -> String {
    let protocol = match report.streaming {
        true => format!("{} (streaming)", report.protocol),
        false => report.protocol.clone(),
    };
    let mut rows = vec![
        ("Model", escape(&report.model)),
        ("Server", escape(&report.url)),
        ("Protocol", protocol),
        ("Batch size", report.batch_size.to_string()),
        ("Load", report.load_kind.replace('_', " ")),
    ];
    if let Some(d) = &report.distribution {
        rows.push(("Distribution", d.clone()));
    }
    if let Some(ms) = report.latency_threshold_ms {
        let judged = report
            .percentile
            .map_or("average".to_string(), |p| format!("p{p}"));
        rows.push(("Latency bound", format!("{ms} ms ({judged})")));
    }
    if let Some(best) = report.best_load {
        rows.push(("Best load within the bound", format_load(best)));
    }
    let t = &report.totals;
    let server = t.server_requests.map_or("-".into(), |s| s.to_string());
    rows.push((
        "Requests sent / counted by the server",
        format!("{} / {server}", t.requests_sent),
    ));
    let mut out = String::from("<table class=\"meta\">");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    out.push_str("</table>");
    out
}

fn results_table(report: &Report, load_name: &str) -> String {
    let mut out = format!(
        "<h2>Results</h2><table id=\"results\"><tr><th>{load_name}</th><th>infer/s</th><th>avg us</th>\
         <th>p50 us</th><th>p90 us</th><th>p95 us</th><th>p99 us</th><th>client send us</th>\
         <th>client recv us</th><th>server queue us</th><th>server compute us</th><th>errors</th><th>stable</th></tr>"
    );
    for p in &report.points {
        let (queue, compute) = p.server.as_ref().map_or(("-".into(), "-".into()), |s| {
            (
                format!("{:.0}", s.queue_us),
                format!(
                    "{:.0}",
                    s.compute_input_us + s.compute_infer_us + s.compute_output_us
                ),
            )
        });
        let l = &p.latency_us;
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{:.1}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.1}</td><td>{:.1}</td><td>{queue}</td><td>{compute}</td><td>{}</td><td>{}</td></tr>",
            format_load(p.load),
            p.throughput,
            l.avg,
            l.p50,
            l.p90,
            l.p95,
            l.p99,
            p.client_send_us,
            p.client_recv_us,
            p.errors,
            if p.stable { "yes" } else { "no" }
        );
    }
    out.push_str("</table>");
    out
}
