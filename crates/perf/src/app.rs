//! One run: look the model up, build the requests, sweep the load, report.

use std::{
    collections::HashMap,
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use crate::{
    cli::{MeasurementMode, Protocol, RunArgs, SharedMemoryKind},
    cpu::process_cpu_seconds,
    error::{Error, Result},
    grpc::{self, infer::GrpcConnector, stream::GrpcStreamConnector},
    http::{encode, infer::HttpConnector},
    inputs::{self, DataSource, InputOptions, InputTensor},
    measure::{Session, Settings},
    model::ModelInfo,
    report::{Report, RunTotals, console, csv, html, json},
    results::PointResult,
    sequence::Sequences,
    shm::SharedMemory,
    stats_source::StatsSource,
    sweep::{self, LoadKind, Plan},
    target::Target,
};

/// Runs the tool; the report, or why it could not be made.
pub async fn run(cli: &RunArgs) -> Result<Report> {
    let started = Instant::now();
    let cpu_before = process_cpu_seconds();
    let grpc = cli.protocol == Protocol::Grpc;
    if cli.streaming && !grpc {
        return Err(Error::new("--streaming needs -i grpc"));
    }
    let default_url = if grpc {
        "localhost:8001"
    } else {
        "localhost:8000"
    };
    let url = cli.url.clone().unwrap_or_else(|| default_url.into());
    let target = Target::resolve(&url).await?;
    let client = target.client(grpc).await?;
    let (model, version) = (cli.model.as_str(), cli.model_version.as_deref());
    let info = ModelInfo::fetch(&client, model, version).await?;
    if info.decoupled && !(grpc && cli.streaming) {
        return Err(Error::new(format!(
            "model '{model}' is decoupled: its responses come over a gRPC stream; use -i grpc \
             --streaming"
        )));
    }
    if info.sequence && cli.request_rate_range.is_some() {
        return Err(Error::new(format!(
            "model '{model}' is a sequence model: measure it with --concurrency-range (each \
             connection sends whole sequences); --request-rate-range does not support sequences"
        )));
    }
    let steps = inputs::build(&info, &input_options(cli))?;
    let stats = StatsSource::new(client.clone(), model, version);
    let mut session = Session::new(settings(cli), Some(stats));
    let mut plan = plan(cli);
    if info.sequence {
        plan.sequences = Some(Arc::new(Sequences::new(
            cli.sequence_id_range,
            cli.sequence_length,
            cli.sequence_length_variation,
        )));
    }
    let kind = match plan.kind {
        LoadKind::Concurrency => "concurrency",
        LoadKind::Rate { .. } => "request_rate",
    };
    let requests = Requests {
        cli,
        target: &target,
        steps: &steps,
        decoupled: info.decoupled,
    };
    let points = match cli.shared_memory {
        SharedMemoryKind::None => requests.sweep(&mut session, &plan, kind, None).await?,
        SharedMemoryKind::System => {
            let memory =
                SharedMemory::create(&info, &steps, cli.batch_size, cli.output_shared_memory_size)?;
            let mut outcome = Ok(Vec::new());
            for region in &memory.regions {
                let (name, key, size) = (region.name(), region.key(), region.byte_size());
                let registered = client.register_system_shared_memory(name, key, size, 0);
                outcome = registered.await.map(|()| Vec::new()).map_err(Error::from);
                if outcome.is_err() {
                    break;
                }
            }
            if outcome.is_ok() {
                outcome = requests
                    .sweep(&mut session, &plan, kind, Some(&memory))
                    .await;
            }
            for region in &memory.regions {
                let _ = client.unregister_system_shared_memory(region.name()).await;
            }
            outcome?
        }
    };
    let best_load = sweep::best(&points, plan.bound_us).map(|p| p.load);
    let totals = totals(&points, started.elapsed(), cpu_before);
    Ok(Report {
        model: cli.model.clone(),
        version: cli.model_version.clone(),
        url,
        protocol: if grpc { "grpc" } else { "http" }.into(),
        streaming: cli.streaming,
        decoupled: info.decoupled,
        batch_size: cli.batch_size,
        load_kind: kind.into(),
        distribution: matches!(plan.kind, LoadKind::Rate { .. })
            .then(|| format!("{:?}", cli.request_distribution).to_lowercase()),
        percentile: cli.percentile,
        latency_threshold_ms: cli.latency_threshold,
        points,
        best_load,
        totals,
    })
}

/// The requests of a run, encoded for its protocol.
struct Requests<'a> {
    cli: &'a RunArgs,
    target: &'a Target,
    steps: &'a [Vec<InputTensor>],
    decoupled: bool,
}

impl Requests<'_> {
    /// Encodes the requests (naming shared memory regions when `memory` is
    /// given) and sweeps the plan with them.
    async fn sweep(
        &self,
        session: &mut Session,
        plan: &Plan,
        kind: &str,
        memory: Option<&SharedMemory>,
    ) -> Result<Vec<PointResult>> {
        let cli = self.cli;
        let (model, version) = (cli.model.as_str(), cli.model_version.as_deref());
        let target = self.target.clone();
        let show = |p: &PointResult| console::say(&console::point_line(kind, p));
        let steps = self.steps.iter().enumerate();
        if cli.protocol == Protocol::Grpc {
            let frames = steps
                .map(|(i, s)| match memory {
                    Some(m) => grpc::encode::request_shared(
                        model,
                        version,
                        s,
                        &m.inputs[i],
                        &m.outputs,
                        self.decoupled,
                    ),
                    None => grpc::encode::request(model, version, s, self.decoupled),
                })
                .collect();
            return match cli.streaming {
                true => {
                    sweep::run(
                        session,
                        &GrpcStreamConnector::new(target, frames, self.decoupled),
                        plan,
                        show,
                    )
                    .await
                }
                false => sweep::run(session, &GrpcConnector::new(target, frames), plan, show).await,
            };
        }
        let bodies = steps
            .map(|(i, s)| match memory {
                Some(m) => Ok(encode::encode_shared(s, &m.inputs[i], &m.outputs)),
                None => encode::encode(s, cli.input_tensor_format, cli.output_tensor_format),
            })
            .collect::<Result<_>>()?;
        let path = match version {
            Some(v) => format!("/v2/models/{model}/versions/{v}/infer"),
            None => format!("/v2/models/{model}/infer"),
        };
        sweep::run(
            session,
            &HttpConnector::new(target, &path, bodies)?,
            plan,
            show,
        )
        .await
    }
}

/// Prints the table and writes the files the command line asks for.
pub fn write_outputs(cli: &RunArgs, report: &Report) -> Result<()> {
    console::say(console::table(report).trim_end());
    let write = |path: &Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &cli.csv {
        write(path, csv::render(report))?;
    }
    if let Some(path) = &cli.json {
        write(path, json::render(report))?;
    }
    if let Some(path) = &cli.html {
        write(path, html::render(report))?;
    }
    Ok(())
}

fn input_options(cli: &RunArgs) -> InputOptions {
    InputOptions {
        source: DataSource::parse(&cli.input_data),
        batch_size: cli.batch_size,
        shapes: cli.shapes.iter().cloned().collect::<HashMap<_, _>>(),
        string_length: cli.string_length,
        string_data: cli.string_data.clone(),
    }
}

fn settings(cli: &RunArgs) -> Settings {
    Settings {
        mode: cli.measurement_mode,
        interval: Duration::from_millis(cli.measurement_interval),
        request_count: match cli.measurement_mode {
            MeasurementMode::CountWindows => cli.measurement_request_count.max(1),
            MeasurementMode::TimeWindows => 0,
        },
        stability_percentage: cli.stability_percentage,
        max_trials: cli.max_trials,
        percentile: cli.percentile,
        warmup_requests: cli.warmup_request_count,
    }
}

fn plan(cli: &RunArgs) -> Plan {
    let (kind, values) = match cli.request_rate_range {
        Some(range) => (
            LoadKind::Rate {
                distribution: cli.request_distribution,
                connections: cli.max_threads.max(1) as usize,
            },
            range.values(),
        ),
        None => (
            LoadKind::Concurrency,
            cli.concurrency_range.map_or(vec![1.0], |r| r.values()),
        ),
    };
    Plan {
        kind,
        values,
        batch_size: cli.batch_size,
        bound_us: cli.latency_threshold.map(|ms| ms * 1000.0),
        binary_search: cli.binary_search,
        sequences: None,
    }
}

fn totals(points: &[PointResult], wall: Duration, cpu_before: Option<f64>) -> RunTotals {
    let requests_sent = points.iter().map(|p| p.requests_sent).sum();
    let server_requests = points
        .iter()
        .map(|p| p.server_requests)
        .sum::<Option<u64>>();
    let tool_cpu_seconds = cpu_before.zip(process_cpu_seconds()).map(|(a, b)| b - a);
    RunTotals {
        requests_sent,
        server_requests,
        errors: points.iter().map(|p| p.errors).sum(),
        wall_seconds: wall.as_secs_f64(),
        tool_cpu_seconds,
        requests_per_tool_cpu_second: tool_cpu_seconds
            .filter(|c| *c > 0.0)
            .map(|c| requests_sent as f64 / c),
    }
}
