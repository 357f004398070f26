//! The command line: perf_analyzer's flag names where it has them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Load generator for KServe v2 inference servers (oxiserve, Triton).
#[derive(Debug, Parser)]
#[command(
    name = "oxiserve-perf",
    version,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(flatten)]
    pub run: Option<RunArgs>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sweep a model's instance count, max batch size and dynamic batching
    /// (reloading it through the repository API with config overrides; the
    /// server must be in explicit model control mode), measure each, and
    /// report the best configuration under the latency bound.
    Analyze(AnalyzeArgs),
}

/// The configurations `analyze` tries (every combination) and how it measures them.
#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Instance counts to try (KIND_CPU instance groups).
    #[arg(long = "instance-counts", value_delimiter = ',', default_value = "1,2")]
    pub instance_counts: Vec<u32>,
    /// Maximum batch sizes to try (default: the model's own).
    #[arg(long = "max-batch-sizes", value_delimiter = ',')]
    pub max_batch_sizes: Vec<u32>,
    /// Dynamic batching settings to try.
    #[arg(
        long = "dynamic-batching",
        value_delimiter = ',',
        default_value = "off,on"
    )]
    pub dynamic_batching: Vec<OnOff>,
}

/// A switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    Off,
    On,
}

/// One measurement run: what to load, how, and where to write the results.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Model to load.
    #[arg(short = 'm', long = "model-name")]
    pub model: String,
    /// Model version (default: the server's choice).
    #[arg(short = 'x', long = "model-version")]
    pub model_version: Option<String>,
    /// Server address, `host:port` (a leading `http://` is accepted).
    /// Default: localhost:8000 for HTTP, localhost:8001 for gRPC.
    #[arg(short = 'u', long = "url")]
    pub url: Option<String>,
    /// Protocol.
    #[arg(short = 'i', long = "protocol", value_enum, default_value_t = Protocol::Http, ignore_case = true)]
    pub protocol: Protocol,
    /// gRPC only: send requests on bidirectional streams (ModelStreamInfer).
    #[arg(long)]
    pub streaming: bool,
    /// Batch size of each request (models with max_batch_size > 0).
    #[arg(short = 'b', long = "batch-size", default_value_t = 1)]
    pub batch_size: u32,
    /// Closed loop: `start:end:step` outstanding requests (default 1).
    #[arg(long = "concurrency-range", value_parser = parse_concurrency)]
    pub concurrency_range: Option<Range<u32>>,
    /// Open loop: `start:end:step` requests per second.
    #[arg(long = "request-rate-range", value_parser = parse_rate, conflicts_with = "concurrency_range")]
    pub request_rate_range: Option<Range<f64>>,
    /// Open loop: intervals between requests.
    #[arg(long = "request-distribution", value_enum, default_value_t = Distribution::Constant)]
    pub request_distribution: Distribution,
    /// Open loop: connections that carry the scheduled requests.
    #[arg(long = "max-threads", default_value_t = 64)]
    pub max_threads: u32,
    /// Threads that drive the connections. One sustains tens of thousands of
    /// requests per second and, on a machine shared with the server, takes
    /// the least CPU from it; more help only a load generator with CPUs of
    /// its own.
    #[arg(long = "worker-threads", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub worker_threads: u32,
    /// Instead of walking the range, search it for the highest load whose
    /// latency stays under --latency-threshold.
    #[arg(long = "binary-search", requires = "latency_threshold")]
    pub binary_search: bool,
    /// Latency bound in milliseconds: the sweep stops at the first load over it.
    #[arg(short = 'l', long = "latency-threshold")]
    pub latency_threshold: Option<f64>,
    /// Use this latency percentile (not the average) for stability and the bound.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub percentile: Option<u8>,
    /// Shape of an input with variable dims, without the batch dim: NAME:d1,d2,...
    #[arg(long = "shape", value_parser = parse_shape)]
    pub shapes: Vec<(String, Vec<i64>)>,
    /// Sequence models: the usual number of requests in a sequence.
    #[arg(long = "sequence-length", default_value_t = 20)]
    pub sequence_length: u32,
    /// Sequence models: how far a sequence's length may stray from
    /// --sequence-length, in percent of it.
    #[arg(long = "sequence-length-variation", default_value_t = 20.0)]
    pub sequence_length_variation: f64,
    /// Sequence models: the ids to use, START or START:END (END excluded;
    /// ids then start again from START).
    #[arg(long = "sequence-id-range", default_value = "1", value_parser = parse_id_range)]
    pub sequence_id_range: (u64, Option<u64>),
    /// Input values: `zero`, `random`, or a JSON file in perf_analyzer's format.
    #[arg(long = "input-data", default_value = "random")]
    pub input_data: String,
    /// Length of generated BYTES elements.
    #[arg(long = "string-length", default_value_t = 128)]
    pub string_length: usize,
    /// Use this string for every generated BYTES element.
    #[arg(long = "string-data")]
    pub string_data: Option<String>,
    /// HTTP: input tensors in the binary extension or as JSON.
    #[arg(long = "input-tensor-format", value_enum, default_value_t = TensorFormat::Binary)]
    pub input_tensor_format: TensorFormat,
    /// HTTP: ask for output tensors in the binary extension or as JSON.
    #[arg(long = "output-tensor-format", value_enum, default_value_t = TensorFormat::Binary)]
    pub output_tensor_format: TensorFormat,
    /// Where input and output tensors live: in the requests (`none`) or in
    /// POSIX shared memory registered with the server (`system`).
    #[arg(long = "shared-memory", value_enum, default_value_t = SharedMemoryKind::None)]
    pub shared_memory: SharedMemoryKind,
    /// Shared memory: bytes reserved for each output whose size the model's
    /// dims do not fix (variable dims, BYTES).
    #[arg(long = "output-shared-memory-size", default_value_t = 102_400)]
    pub output_shared_memory_size: u64,
    /// Length of a measurement window in milliseconds (time_windows).
    #[arg(short = 'p', long = "measurement-interval", default_value_t = 5000)]
    pub measurement_interval: u64,
    /// How a measurement window ends.
    #[arg(long = "measurement-mode", value_enum, default_value_t = MeasurementMode::TimeWindows)]
    pub measurement_mode: MeasurementMode,
    /// Responses per window in count_windows mode.
    #[arg(long = "measurement-request-count", default_value_t = 50)]
    pub measurement_request_count: u64,
    /// The last three windows are stable when each is within this many percent
    /// of their mean, in throughput and latency.
    #[arg(short = 's', long = "stability-percentage", default_value_t = 10.0)]
    pub stability_percentage: f64,
    /// Windows per load level before giving up on stability.
    #[arg(short = 'r', long = "max-trials", default_value_t = 10)]
    pub max_trials: u32,
    /// Requests sent before the first measurement window.
    #[arg(long = "warmup-request-count", default_value_t = 0)]
    pub warmup_request_count: u64,
    /// Write the results as CSV (perf_analyzer's columns).
    #[arg(short = 'f', long = "latency-report-file")]
    pub csv: Option<PathBuf>,
    /// Write the results as JSON.
    #[arg(long = "json")]
    pub json: Option<PathBuf>,
    /// Write an HTML report with plots (one self-contained file).
    #[arg(long = "html")]
    pub html: Option<PathBuf>,
}

/// Wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    Http,
    Grpc,
}

/// Inter-arrival times of an open-loop schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Distribution {
    Constant,
    Poisson,
}

/// Where tensors travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SharedMemoryKind {
    None,
    System,
}

/// Tensor encoding in HTTP bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TensorFormat {
    Binary,
    Json,
}

/// How a measurement window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum MeasurementMode {
    TimeWindows,
    CountWindows,
}

/// An inclusive `start:end:step` range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range<T> {
    pub start: T,
    pub end: T,
    pub step: T,
}

impl Range<u32> {
    /// The values from start to end (inclusive) by step.
    pub fn values(&self) -> Vec<f64> {
        (self.start..=self.end)
            .step_by(self.step as usize)
            .map(f64::from)
            .collect()
    }
}

impl Range<f64> {
    /// The values from start to end (inclusive, with rounding slack) by step.
    pub fn values(&self) -> Vec<f64> {
        let steps = ((self.end - self.start) / self.step + 1e-9).floor() as usize;
        (0..=steps)
            .map(|i| self.start + i as f64 * self.step)
            .collect()
    }
}

fn parse_range<T>(text: &str, one: T) -> Result<Range<T>, String>
where
    T: std::str::FromStr + Copy + PartialOrd + Default,
{
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(format!("expected start[:end[:step]], got '{text}'"));
    }
    let num = |p: &str| {
        p.trim()
            .parse::<T>()
            .map_err(|_| format!("'{p}' is not a valid number in '{text}'"))
    };
    let start = num(parts[0])?;
    let end = parts.get(1).map(|p| num(p)).transpose()?.unwrap_or(start);
    let step = parts.get(2).map(|p| num(p)).transpose()?.unwrap_or(one);
    if start <= T::default() || step <= T::default() {
        return Err(format!("start and step must be positive in '{text}'"));
    }
    if end < start {
        return Err(format!("end is below start in '{text}'"));
    }
    Ok(Range { start, end, step })
}

fn parse_concurrency(text: &str) -> Result<Range<u32>, String> {
    parse_range(text, 1)
}

fn parse_rate(text: &str) -> Result<Range<f64>, String> {
    let range = parse_range::<f64>(text, 1.0)?;
    if !range.end.is_finite() {
        return Err(format!("'{text}' is not a finite rate"));
    }
    Ok(range)
}

/// `NAME:d1,d2,...` with positive dims.
fn parse_shape(text: &str) -> Result<(String, Vec<i64>), String> {
    let (name, dims) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("expected NAME:d1,d2,..., got '{text}'"))?;
    if name.is_empty() {
        return Err(format!("missing input name in '{text}'"));
    }
    let dims = dims
        .split(',')
        .map(|d| match d.trim().parse::<i64>() {
            Ok(v) if v >= 0 => Ok(v),
            _ => Err(format!("'{d}' is not a valid dimension in '{text}'")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((name.to_string(), dims))
}

/// `START` or `START:END` with START >= 1 and END > START.
fn parse_id_range(text: &str) -> Result<(u64, Option<u64>), String> {
    let number = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("'{t}' is not a sequence id in '{text}'"))
    };
    let (start, end) = match text.split_once(':') {
        Some((start, end)) => (number(start)?, Some(number(end)?)),
        None => (number(text)?, None),
    };
    if start == 0 {
        return Err("sequence ids start at 1 (0 means none)".into());
    }
    if end.is_some_and(|end| end <= start) {
        return Err(format!("the end of '{text}' is not above its start"));
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_id_ranges() {
        assert_eq!(parse_id_range("1"), Ok((1, None)));
        assert_eq!(parse_id_range("5:9"), Ok((5, Some(9))));
        assert!(parse_id_range("0").unwrap_err().contains("start at 1"));
        assert!(parse_id_range("9:5").unwrap_err().contains("not above"));
        assert!(parse_id_range("x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn analyze_takes_the_run_flags_and_lists() {
        let cli = Cli::try_parse_from([
            "p",
            "analyze",
            "-m",
            "m",
            "--instance-counts",
            "1,3",
            "--dynamic-batching",
            "on",
        ])
        .unwrap();
        let Some(Command::Analyze(a)) = cli.command else {
            panic!("analyze expected")
        };
        assert_eq!(
            (a.run.model.as_str(), a.instance_counts, a.dynamic_batching),
            ("m", vec![1, 3], vec![OnOff::On])
        );
        assert!(a.max_batch_sizes.is_empty());
        let cli = Cli::try_parse_from(["p", "-m", "m", "-b", "2"]).unwrap();
        assert_eq!(cli.run.map(|r| r.batch_size), Some(2));
        assert!(Cli::try_parse_from(["p", "-b", "2"]).is_err());
    }

    #[test]
    fn ranges_take_one_two_or_three_parts() {
        assert_eq!(parse_concurrency("4").unwrap().values(), [4.0]);
        assert_eq!(parse_concurrency("1:3").unwrap().values(), [1.0, 2.0, 3.0]);
        assert_eq!(
            parse_concurrency("1:8:3").unwrap().values(),
            [1.0, 4.0, 7.0]
        );
        assert_eq!(
            parse_rate("100:300:100").unwrap().values(),
            [100.0, 200.0, 300.0]
        );
        assert_eq!(parse_rate("0.5:1:0.25").unwrap().values(), [0.5, 0.75, 1.0]);
    }

    #[test]
    fn bad_ranges_say_why() {
        assert!(parse_concurrency("0:4").unwrap_err().contains("positive"));
        assert!(
            parse_concurrency("4:2")
                .unwrap_err()
                .contains("below start")
        );
        assert!(parse_concurrency("a").unwrap_err().contains("'a'"));
        assert!(
            parse_concurrency("1:2:3:4")
                .unwrap_err()
                .contains("start[:end[:step]]")
        );
    }

    #[test]
    fn shapes_name_an_input() {
        assert_eq!(parse_shape("IN:3,4").unwrap(), ("IN".into(), vec![3, 4]));
        assert_eq!(parse_shape("a:b:2").unwrap(), ("a:b".into(), vec![2]));
        assert!(parse_shape("IN").unwrap_err().contains("NAME:d1"));
        assert!(parse_shape("IN:3,x").unwrap_err().contains("'x'"));
        assert!(parse_shape("IN:-1").is_err());
    }
}
