//! What `--allow-cpu-metrics`, `--metrics-interval-ms`, `--metrics-config`
//! and `--pinned-memory-pool-byte-size` ask of the metrics.

use std::{sync::Arc, time::Duration};

use oxiserve_core::{DEFAULT_QUANTILES, Quantile};

use crate::cli::options::ServerOptions;

/// The metrics' settings, from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsSettings {
    /// Serve the CPU and memory gauges (`--allow-cpu-metrics`).
    pub cpu_metrics: bool,
    /// How often the CPU and memory gauges refresh (`--metrics-interval-ms`).
    pub interval: Duration,
    /// Triton's cumulative duration counters (`counter_latencies`, default
    /// true). As in Triton, `false` also stops the request, inference and
    /// execution counters (they stay at 0).
    pub counter_latencies: bool,
    /// oxiserve's latency histograms (`histogram_latencies`, default true).
    pub histogram_latencies: bool,
    /// Triton's first-response histogram of decoupled models (asked for
    /// with `histogram_latencies=true`, as Triton 2.52 has it).
    pub first_response_histogram: bool,
    /// Triton's latency summaries (`summary_latencies=true`) with these
    /// quantiles (`summary_quantiles`, Triton's by default).
    pub summaries: Option<Arc<[Quantile]>>,
    /// The pinned memory pool's size as Triton reports it
    /// (`--pinned-memory-pool-byte-size`): no pool is allocated, as none is
    /// in a Triton without GPUs, which still reports the size asked for.
    pub pinned_memory_pool_bytes: u64,
}

impl MetricsSettings {
    /// The settings of `options`, and a warning for each `--metrics-config`
    /// setting this build does not act on.
    pub fn from_options(options: &ServerOptions) -> (Self, Vec<String>) {
        let pinned_memory_pool_bytes = options.memory.pinned_memory_pool_byte_size;
        let options = &options.metrics;
        let mut settings = Self {
            cpu_metrics: options.allow_metrics && options.allow_cpu_metrics,
            interval: Duration::from_secs_f64((options.metrics_interval_ms / 1000.0).max(0.001)),
            counter_latencies: true,
            histogram_latencies: options.allow_metrics,
            first_response_histogram: false,
            summaries: None,
            pinned_memory_pool_bytes,
        };
        let mut warnings = Vec::new();
        let mut summaries = false;
        let mut quantiles: Arc<[Quantile]> = DEFAULT_QUANTILES.into();
        for config in &options.metrics_config {
            let (setting, value) = (config.setting.as_str(), config.value.as_str());
            match setting {
                "counter_latencies" => settings.counter_latencies = value != "false",
                "histogram_latencies" => {
                    settings.histogram_latencies &= value != "false";
                    settings.first_response_histogram = value == "true";
                }
                "summary_latencies" => summaries = value == "true",
                "summary_quantiles" => {
                    let parsed = parse_quantiles(value, &mut warnings);
                    if !parsed.is_empty() {
                        quantiles = parsed.into();
                    }
                }
                _ => warnings.push(format!(
                    "--metrics-config {setting}: unknown metrics setting; ignored"
                )),
            }
        }
        settings.summaries = summaries.then_some(quantiles);
        (settings, warnings)
    }
}

/// Triton's `summary_quantiles`: `<quantile>:<error>` pairs separated by
/// commas; a pair that does not parse is reported (Triton's words) and left out.
fn parse_quantiles(text: &str, warnings: &mut Vec<String>) -> Vec<Quantile> {
    let mut quantiles = Vec::new();
    for pair in text.split(',') {
        let Some((quantile, error)) = pair.split_once(':') else {
            warnings.push(format!(
                "Invalid option: [{pair}]. No ':' delimiter found. Expected format is \
                 <quantile>:<error>"
            ));
            continue;
        };
        match (leading_number(quantile), leading_number(error)) {
            (Some(quantile), Some(error)) => quantiles.push(Quantile { quantile, error }),
            _ => warnings.push(format!("Invalid option: [{pair}]. Error: stod")),
        }
    }
    quantiles
}

/// The number `text` starts with, as C++'s `std::stod` reads it: leading
/// spaces skipped, the longest prefix that is a number (`0.0.1` is 0).
fn leading_number(text: &str) -> Option<f64> {
    let text = text.trim_start();
    (1..=text.len())
        .rev()
        .filter(|&end| text.is_char_boundary(end))
        .find_map(|end| text[..end].parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse_args};

    fn settings(flags: &[&str]) -> (MetricsSettings, Vec<String>) {
        let args = ["oxiserve", "--model-repository=/m"].iter().chain(flags);
        let Ok(Command::Serve(options)) = parse_args(args) else {
            panic!("flags {flags:?} do not parse");
        };
        MetricsSettings::from_options(&options)
    }

    #[test]
    fn defaults_match_triton_plus_histograms() {
        let (s, warnings) = settings(&[]);
        assert!(warnings.is_empty());
        assert!(s.cpu_metrics && s.counter_latencies && s.histogram_latencies);
        assert!(!s.first_response_histogram && s.summaries.is_none());
        assert_eq!(s.interval, Duration::from_secs(2));
        assert_eq!(s.pinned_memory_pool_bytes, 256 << 20);
    }

    #[test]
    fn the_pinned_pool_size_is_the_flags() {
        let (s, _) = settings(&["--pinned-memory-pool-byte-size=0"]);
        assert_eq!(s.pinned_memory_pool_bytes, 0);
        let (s, _) = settings(&["--pinned-memory-pool-byte-size=1024"]);
        assert_eq!(s.pinned_memory_pool_bytes, 1024);
    }

    #[test]
    fn metrics_config_switches_families() {
        let (s, warnings) = settings(&[
            "--metrics-config=counter_latencies=false",
            "--metrics-config=histogram_latencies=false",
            "--metrics-config=summary_latencies=true",
            "--metrics-config=colour=blue",
            "--metrics-interval-ms=250",
            "--allow-cpu-metrics=false",
        ]);
        assert!(!s.counter_latencies && !s.histogram_latencies && !s.cpu_metrics);
        assert!(!s.first_response_histogram);
        assert_eq!(s.interval, Duration::from_millis(250));
        assert_eq!(
            warnings,
            ["--metrics-config colour: unknown metrics setting; ignored"]
        );
        assert_eq!(s.summaries.as_deref(), Some(&DEFAULT_QUANTILES[..]));
        let (s, _) = settings(&["--metrics-config=histogram_latencies=true"]);
        assert!(s.histogram_latencies && s.first_response_histogram);
    }

    #[test]
    fn summary_quantiles_are_read_as_triton_reads_them() {
        let (s, warnings) = settings(&[
            "--metrics-config=summary_latencies=true",
            "--metrics-config=summary_quantiles=0.1:0.0.1,0.7:0.01,nope,x:1",
        ]);
        let q = |quantile, error| Quantile { quantile, error };
        assert_eq!(
            s.summaries.as_deref(),
            Some(&[q(0.1, 0.0), q(0.7, 0.01)][..])
        );
        assert_eq!(
            warnings,
            [
                "Invalid option: [nope]. No ':' delimiter found. Expected format is \
                 <quantile>:<error>",
                "Invalid option: [x:1]. Error: stod",
            ]
        );
        let (s, _) = settings(&["--metrics-config=summary_quantiles=bad"]);
        assert!(s.summaries.is_none(), "quantiles alone turn nothing on");
        let (s, _) = settings(&[
            "--metrics-config=summary_latencies=true",
            "--metrics-config=summary_quantiles=bad",
        ]);
        assert_eq!(s.summaries.as_deref(), Some(&DEFAULT_QUANTILES[..]));
    }

    #[test]
    fn no_metrics_means_no_histograms() {
        let (s, _) = settings(&["--allow-metrics=false"]);
        assert!(!s.histogram_latencies && !s.cpu_metrics);
    }
}
