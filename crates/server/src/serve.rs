//! `oxiserve --model-repository=DIR|s3://...|gs://...|as://... ...`: start-up as `tritonserver`
//! does it, then serving until SIGINT or SIGTERM.

use std::{process::ExitCode, sync::Arc, time::Duration};

use oxiserve_core::{Poller, Server};
use oxiserve_trace::TraceManager;

use crate::{
    cache_settings,
    cli::{OPTIONS_TABLE_HEADERS, ServerOptions, render_table},
    endpoints, logging,
    metrics::{MetricsSettings, Registry},
    model_table, server_config, thread_policy,
};

/// Server version reported in the options table.
const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Flags whose features this build does not have yet: each one given is
/// reported, never ignored in silence.
const INACTIVE_IN_THIS_BUILD: &[(&str, &str)] = &[
    (
        "grpc-keepalive-permit-without-calls",
        "the server's keepalive pings go out with or without calls",
    ),
    (
        "sagemaker-thread-count",
        "the SageMaker endpoint shares the --http-thread-count threads",
    ),
    (
        "vertex-ai-thread-count",
        "the Vertex AI endpoint shares the --http-thread-count threads",
    ),
    ("allow-gpu-metrics", "no GPU metrics in this build"),
];

/// Runs the server until it is stopped; returns the process exit status.
pub fn run(options: &ServerOptions) -> ExitCode {
    let log_handle = match logging::init(&options.logging) {
        Ok(handle) => handle,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if options.batch_scheduling
        && let Err(e) = thread_policy::use_batch_policy()
    {
        log::warn!("cannot run the server's threads under SCHED_BATCH: {e}");
    }
    report_flags(options);
    let (metrics_settings, metrics_warnings) = MetricsSettings::from_options(options);
    for warning in &metrics_warnings {
        log::warn!("{warning}");
    }
    let backends = match server_config::backends(
        &options.backend.backend_config,
        server_config::library_settings(options),
    ) {
        Ok(backends) => backends,
        Err(e) => {
            log::error!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut config = server_config::from_options(options, &metrics_settings);
    let cache = match cache_settings::from_options(&options.cache, |name| std::env::var(name).ok())
    {
        Ok(cache) => cache,
        Err(e) => {
            log::error!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    config.response_cache = match cache.map(|choice| choice.open()).transpose() {
        Ok(store) => store,
        Err(e) => {
            log::error!("error: creating server: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `_cache` holds the copies of remote repositories until the server stops.
    let oxiserve_s3::Localized {
        repositories,
        sync,
        cache: _cache,
    } = match oxiserve_s3::localize(&config.repositories) {
        Ok(localized) => localized,
        Err(e) => {
            log::error!("error: creating server: {e}");
            return ExitCode::FAILURE;
        }
    };
    config.repositories = repositories;
    // Where the SageMaker endpoint registers model archives: one more
    // repository, removed when the server stops.
    let sagemaker_registry = match endpoints::sagemaker::registry(options) {
        Ok(registry) => registry,
        Err(e) => {
            log::error!("error: creating server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let registry_path = sagemaker_registry
        .as_ref()
        .map(|dir| dir.path().to_path_buf());
    config.repositories.extend(registry_path.clone());
    let tracing = match options.trace_config().and_then(TraceManager::new) {
        Ok(tracing) => tracing,
        Err(e) => {
            log::error!("error: creating server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = Server::new(config, backends);
    server.set_tracing(Arc::new(tracing));
    server.set_log_control(Arc::new(log_handle));
    if let Some(sync) = sync {
        server.set_repository_sync(sync);
    }
    let load = server.load_startup_models();
    let repository_errors = load.repository_errors;
    for error in &repository_errors {
        log::error!("{error}");
    }
    let index = server.repository_index(false);
    log::info!("\n{}", model_table::render(&model_table::rows(&index)));
    let option_rows: Vec<Vec<String>> = options
        .options_table(SERVER_VERSION, crate::endpoints::EXTENSIONS)
        .into_iter()
        .map(|(k, v)| vec![k, v])
        .collect();
    log::info!("\n{}", render_table(&OPTIONS_TABLE_HEADERS, &option_rows));

    if !repository_errors.is_empty() {
        log::error!("error: creating server: a model repository cannot be read");
        if options.repository.exit_on_error {
            return ExitCode::FAILURE;
        }
        // As Triton: up, but neither live nor ready; model APIs refuse.
        server.fail_start_up();
    }
    if !load.failed_models.is_empty() {
        if options.repository.exit_on_error {
            log::error!("error: creating server: failed to load all models");
            server.shutdown();
            return ExitCode::FAILURE;
        }
        log::error!(
            "failed to load all models: {}",
            load.failed_models.join(", ")
        );
    }
    let poller = match start_poller(&server, options) {
        Ok(poller) => poller,
        Err(e) => {
            log::error!("error: creating server: {e}");
            server.shutdown();
            return ExitCode::FAILURE;
        }
    };
    let metrics = Registry::new(server.clone(), metrics_settings);
    endpoints::serve(server, options, metrics, poller, registry_path)
}

fn report_flags(options: &ServerOptions) {
    for warning in options
        .unsupported_options()
        .iter()
        .chain(&options.deprecation_warnings())
        .chain(&options.trace_warnings())
    {
        log::warn!("{warning}");
    }
    for (flag, why) in INACTIVE_IN_THIS_BUILD
        .iter()
        .filter(|(flag, _)| options.was_passed(flag))
    {
        log::warn!("--{flag}: no effect in this build ({why})");
    }
}

/// The repository poller of `--model-control-mode=poll`, unless
/// `--repository-poll-secs=0` turns polling off.
fn start_poller(server: &Server, options: &ServerOptions) -> Result<Option<Poller>, String> {
    let repository = &options.repository;
    if repository.model_control_mode != crate::cli::values::ModelControlMode::Poll {
        return Ok(None);
    }
    if repository.repository_poll_secs == 0 {
        log::warn!(
            "--model-control-mode=poll with --repository-poll-secs=0: the repository is not polled"
        );
        return Ok(None);
    }
    let interval = Duration::from_secs(u64::from(repository.repository_poll_secs));
    server
        .start_polling(interval)
        .map(Some)
        .map_err(|e| format!("cannot start the repository poller: {e}"))
}
