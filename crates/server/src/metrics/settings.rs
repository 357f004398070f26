//! What `--allow-cpu-metrics`, `--metrics-interval-ms`, `--metrics-config`
//! and `--pinned-memory-pool-byte-size` ask of the metrics.

use std::time::Duration;

use crate::cli::options::ServerOptions;

/// The metrics' settings, from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsSettings {
    /// Serve the CPU and memory gauges (`--allow-cpu-metrics`).
    pub cpu_metrics: bool,
    /// How often the CPU and memory gauges refresh (`--metrics-interval-ms`).
    pub interval: Duration,
    /// Triton's cumulative duration counters (`counter_latencies`, default true).
    pub counter_latencies: bool,
    /// oxiserve's latency histograms (`histogram_latencies`, default true).
    pub histogram_latencies: bool,
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
            pinned_memory_pool_bytes,
        };
        let mut warnings = Vec::new();
        for config in &options.metrics_config {
            let (setting, value) = (config.setting.as_str(), config.value.as_str());
            match setting {
                "counter_latencies" => settings.counter_latencies = value != "false",
                "histogram_latencies" => {
                    settings.histogram_latencies &= value != "false";
                }
                "summary_latencies" | "summary_quantiles" => warnings.push(format!(
                    "--metrics-config {setting}: latency summaries are not supported \
                     (use the oxi_* histograms); ignored"
                )),
                _ => warnings.push(format!(
                    "--metrics-config {setting}: unknown metrics setting; ignored"
                )),
            }
        }
        (settings, warnings)
    }
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
        assert_eq!(s.interval, Duration::from_millis(250));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("summary_latencies"), "{warnings:?}");
    }

    #[test]
    fn no_metrics_means_no_histograms() {
        let (s, _) = settings(&["--allow-metrics=false"]);
        assert!(!s.histogram_latencies && !s.cpu_metrics);
    }
}
