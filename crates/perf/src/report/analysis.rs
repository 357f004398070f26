//! What `analyze` found (each configuration tried and how it did) and its
//! outputs: a console table of the configurations, JSON of the whole
//! analysis, CSV (one row per configuration), and an HTML page plotting every
//! configuration's curves.

use std::fmt::Write;

use serde::Serialize;

use super::{
    Report,
    console::{format_load, say},
    svg::{Chart, Series, escape},
};
use crate::{
    cli::RunArgs,
    error::{Error, Result},
    results::PointResult,
};

/// One configuration tried.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    pub instance_count: u32,
    pub max_batch_size: u32,
    pub dynamic_batching: bool,
}

impl Candidate {
    /// `2 instances, max_batch_size 8, dynamic batching on`.
    pub fn describe(&self) -> String {
        format!(
            "{} instance{}, max_batch_size {}, dynamic batching {}",
            self.instance_count,
            if self.instance_count == 1 { "" } else { "s" },
            self.max_batch_size,
            if self.dynamic_batching { "on" } else { "off" }
        )
    }
}

/// A configuration and how it did.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub config: Candidate,
    /// The same settings as the server reports them after the reload.
    pub server_config: Candidate,
    /// Its highest-throughput point under the bound.
    pub best: Option<PointResult>,
    pub report: Report,
}

/// The whole analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub model: String,
    pub latency_threshold_ms: Option<f64>,
    pub trials: Vec<Trial>,
    /// Index into `trials` of the best configuration.
    pub best: Option<usize>,
}

impl Analysis {
    /// The run reports of every configuration.
    pub fn reports(self) -> Vec<Report> {
        self.trials.into_iter().map(|t| t.report).collect()
    }
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Prints the table and writes the files `run` asks for.
pub fn write(run: &RunArgs, analysis: &Analysis) -> Result<()> {
    say(table(analysis).trim_end());
    let write = |path: &std::path::Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &run.json {
        write(
            path,
            serde_json::to_string_pretty(analysis).expect("serializes") + "\n",
        )?;
    }
    if let Some(path) = &run.csv {
        write(path, csv(analysis))?;
    }
    if let Some(path) = &run.html {
        write(path, html(analysis))?;
    }
    Ok(())
}

fn table(a: &Analysis) -> String {
    let mut out = format!(
        "{:>9} {:>15} {:>17} {:>10} {:>12} {:>12}\n",
        "instances", "max_batch_size", "dynamic batching", "best load", "infer/s", "latency us"
    );
    for (i, t) in a.trials.iter().enumerate() {
        let c = &t.config;
        let (load, rate, latency) =
            t.best
                .as_ref()
                .map_or(("-".into(), "-".into(), "-".into()), |b| {
                    (
                        format_load(b.load),
                        format!("{:.1}", b.throughput),
                        format!("{:.0}", b.judged_latency_us),
                    )
                });
        let mark = if a.best == Some(i) { "  <- best" } else { "" };
        let dynamic = if c.dynamic_batching { "on" } else { "off" };
        let _ = writeln!(
            out,
            "{:>9} {:>15} {:>17} {load:>10} {rate:>12} {latency:>12}{mark}",
            c.instance_count, c.max_batch_size, dynamic
        );
    }
    out
}

fn csv(a: &Analysis) -> String {
    let mut out = String::from(
        "Instance Count,Max Batch Size,Dynamic Batching,Best Load,Inferences/Second,Latency\n",
    );
    for t in &a.trials {
        let c = &t.config;
        let (load, rate, latency) =
            t.best
                .as_ref()
                .map_or((String::new(), String::new(), String::new()), |b| {
                    (
                        format_load(b.load),
                        format!("{:.2}", b.throughput),
                        format!("{:.0}", b.judged_latency_us),
                    )
                });
        let _ = writeln!(
            out,
            "{},{},{},{load},{rate},{latency}",
            c.instance_count, c.max_batch_size, c.dynamic_batching
        );
    }
    out
}

fn html(a: &Analysis) -> String {
    let series = |f: &dyn Fn(&crate::results::PointResult) -> (f64, f64)| -> Vec<Series> {
        a.trials
            .iter()
            .enumerate()
            .map(|(i, t)| Series {
                name: format!(
                    "{}i / b{} / {}",
                    t.config.instance_count,
                    t.config.max_batch_size,
                    if t.config.dynamic_batching {
                        "dyn"
                    } else {
                        "no dyn"
                    }
                ),
                color: COLORS[i % COLORS.len()],
                points: t.report.points.iter().map(f).collect(),
            })
            .collect()
    };
    let load_name = match a.trials.first().map(|t| t.report.load_kind.as_str()) {
        Some("request_rate") => "Request rate (requests/s)",
        _ => "Concurrency",
    };
    let throughput = Chart {
        id: "throughput-plot".into(),
        title: "Throughput per configuration".into(),
        x_label: load_name.into(),
        y_label: "Throughput (infer/s)".into(),
        series: series(&|p| (p.load, p.throughput)),
    };
    let latency = Chart {
        id: "latency-plot".into(),
        title: "Latency vs throughput per configuration".into(),
        x_label: "Throughput (infer/s)".into(),
        y_label: "Latency (us)".into(),
        series: series(&|p| (p.throughput, p.judged_latency_us)),
    };
    let best = a.best.map_or("none within the bound".to_string(), |i| {
        escape(&a.trials[i].config.describe())
    });
    let bound = a
        .latency_threshold_ms
        .map_or("none".into(), |ms| format!("{ms} ms"));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>oxiserve-perf analyze: {model}</title>\
         <style>body{{font-family:sans-serif;margin:24px;color:#222}}pre{{background:#f6f6f6;padding:8px}}\
         .plots{{display:flex;flex-wrap:wrap;gap:16px}}</style></head><body>\
         <h1>oxiserve-perf analyze: {model}</h1><p>Latency bound: {bound}. Best configuration: <b id=\"best\">{best}</b></p>\
         <div class=\"plots\">{}{}</div><h2>Configurations</h2><pre id=\"results\">{}</pre></body></html>\n",
        throughput.render(),
        latency.render(),
        escape(&table(a)),
        model = escape(&a.model)
    )
}
