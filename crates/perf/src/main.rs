//! `oxiserve-perf`: measures a KServe v2 inference server (oxiserve or
//! Triton) under load, as perf_analyzer does; `oxiserve-perf analyze` finds
//! a model's best configuration, as model_analyzer does.

mod analyze;
mod app;
mod cli;
mod client;
mod cpu;
mod data_file;
mod driven;
mod error;
mod grpc;
mod http;
mod inputs;
mod load;
mod measure;
mod model;
mod progress;
mod recorder;
mod report;
mod results;
mod sequence;
mod server_stats;
mod shm;
mod stability;
mod stats_source;
mod sweep;
mod target;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::{
    cli::{Cli, Command},
    error::Result,
    report::Report,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let threads = match (&cli.command, &cli.run) {
        (Some(Command::Analyze(args)), _) => args.run.worker_threads,
        (None, Some(args)) => args.worker_threads,
        (None, None) => 1,
    };
    let mut builder = match threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(n as usize);
            builder
        }
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let outcome = match (&cli.command, &cli.run) {
        (Some(Command::Analyze(args)), _) => {
            runtime.block_on(analyze::run(args)).map(|a| a.reports())
        }
        (None, Some(args)) => runtime
            .block_on(app::run(args))
            .and_then(|report| app::write_outputs(args, &report).map(|()| vec![report])),
        (None, None) => Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "-m MODEL is required",
            )
            .exit(),
    };
    match outcome.and_then(|reports| check_errors(&reports)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

/// Failed requests make the run fail, with the first reason.
fn check_errors(reports: &[Report]) -> Result<()> {
    let failed: Vec<_> = reports
        .iter()
        .flat_map(|r| &r.points)
        .filter(|p| p.errors > 0)
        .collect();
    match failed.first() {
        None => Ok(()),
        Some(first) => {
            let why = first.first_error.as_deref().unwrap_or("unknown");
            let errors: u64 = failed.iter().map(|p| p.errors).sum();
            Err(error::Error::new(format!(
                "{errors} requests failed; the first: {why}"
            )))
        }
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}
