//! `oxiserve --model-repository=DIR ...`: start-up as `tritonserver` does it.
//!
//! This build reads and checks the model repositories and prints Triton's
//! model and option tables. It has no backends and no endpoints yet, so every
//! model is reported UNAVAILABLE with that reason.

use std::process::ExitCode;

use oxiserve_core::repository::{ModelSpec, ScanOptions, scan};

use crate::{
    cli::{OPTIONS_TABLE_HEADERS, ServerOptions, render_table, values::ModelControlMode},
    logging, model_table,
};

/// Server version reported in the options table.
const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Flags whose features this build does not have yet (no endpoints, no
/// backends, no polling): each one given is reported, never ignored in silence.
const INACTIVE_IN_THIS_BUILD: &[(&str, &str)] = &[
    ("http-port", "no HTTP endpoint yet"),
    ("http-address", "no HTTP endpoint yet"),
    ("http-thread-count", "no HTTP endpoint yet"),
    ("allow-http", "no HTTP endpoint yet"),
    ("grpc-port", "no gRPC endpoint yet"),
    ("grpc-address", "no gRPC endpoint yet"),
    ("allow-grpc", "no gRPC endpoint yet"),
    ("grpc-keepalive-time", "no gRPC endpoint yet"),
    ("grpc-keepalive-timeout", "no gRPC endpoint yet"),
    (
        "grpc-keepalive-permit-without-calls",
        "no gRPC endpoint yet",
    ),
    (
        "grpc-infer-response-compression-level",
        "no gRPC endpoint yet",
    ),
    ("metrics-port", "no metrics endpoint yet"),
    ("metrics-address", "no metrics endpoint yet"),
    ("metrics-interval-ms", "no metrics endpoint yet"),
    ("allow-metrics", "no metrics endpoint yet"),
    ("allow-cpu-metrics", "no metrics endpoint yet"),
    ("allow-gpu-metrics", "no metrics endpoint yet"),
    ("strict-readiness", "no readiness endpoint yet"),
    ("exit-timeout-secs", "no requests to drain yet"),
    ("backend-directory", "no backends yet"),
    ("backend-config", "no backends yet"),
    (
        "model-load-thread-count",
        "models are read one after another",
    ),
    (
        "repository-poll-secs",
        "the repository is read once at start-up",
    ),
];

/// Runs the server until it is stopped; returns the process exit status.
pub fn run(options: &ServerOptions) -> ExitCode {
    if let Err(e) = logging::init(&options.logging) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    for warning in options
        .unsupported_options()
        .iter()
        .chain(&options.deprecation_warnings())
    {
        log::warn!("{warning}");
    }
    for (flag, why) in INACTIVE_IN_THIS_BUILD
        .iter()
        .filter(|(flag, _)| options.was_passed(flag))
    {
        log::warn!("--{flag}: no effect in this build ({why})");
    }
    let repository = &options.repository;
    if repository.model_control_mode == ModelControlMode::Poll {
        log::warn!(
            "--model-control-mode=poll: the repository is read once at start-up; polling is not supported yet"
        );
    }
    let only = match repository.model_control_mode {
        ModelControlMode::Explicit => Some(repository.load_model.clone()),
        ModelControlMode::None | ModelControlMode::Poll => None,
    };
    let scan_options = ScanOptions {
        auto_complete: !repository.strict_model_config,
        gpus: Vec::new(),
        only,
    };
    let scan = scan(&repository.model_repository, &scan_options);
    for error in &scan.repository_errors {
        log::error!("{error}");
    }
    for model in &scan.models {
        if let Err(errors) = &model.outcome {
            for error in errors {
                log::error!("failed to load '{}': {error}", model.name);
            }
        }
    }
    let rows = model_table::rows(&scan.models, unavailable);
    log::info!("\n{}", model_table::render(&rows));
    let option_rows: Vec<Vec<String>> = options
        .options_table(SERVER_VERSION, &[])
        .into_iter()
        .map(|(k, v)| vec![k, v])
        .collect();
    log::info!("\n{}", render_table(&OPTIONS_TABLE_HEADERS, &option_rows));

    if !scan.repository_errors.is_empty() {
        log::error!("error: creating server: a model repository cannot be read");
        return ExitCode::FAILURE;
    }
    let all_ready = scan.models.iter().all(|m| {
        m.outcome
            .as_ref()
            .is_ok_and(|spec| unavailable(spec).is_none())
    });
    if repository.exit_on_error && !all_ready {
        log::error!("error: creating server: failed to load all models");
        return ExitCode::FAILURE;
    }
    log::warn!(
        "this build has no HTTP, gRPC or metrics endpoints yet; waiting for a signal to exit"
    );
    loop {
        std::thread::park();
    }
}

/// Why a model with a valid configuration cannot serve in this build.
fn unavailable(spec: &ModelSpec) -> Option<String> {
    let kind = if spec.config.backend.is_empty() {
        "ensemble scheduling"
    } else {
        "backend"
    };
    let name = if spec.config.backend.is_empty() {
        String::new()
    } else {
        format!(" '{}'", spec.config.backend)
    };
    Some(format!("{kind}{name} is not available in this build yet"))
}
