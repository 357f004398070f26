//! Binding the endpoints (one file per protocol) and serving until a signal
//! arrives; then, as Triton: the HTTP endpoint drains its connections, the
//! models refuse new inference requests while gRPC and metrics still answer
//! and the inferences in flight finish; then the other endpoints stop and
//! the models unload.

mod drain;

mod grpc;
mod header_forward;
mod http;
mod listener;
mod metrics;
mod restrictions;
pub mod sagemaker;
mod service;
mod signal;
mod tls;
mod vertex_ai;

use std::{
    path::PathBuf,
    process::ExitCode,
    time::{Duration, Instant},
};

use oxiserve_core::{Poller, Server};
use tokio::{sync::watch, task::JoinSet};

use crate::{cli::ServerOptions, metrics::Registry};
use service::{Service, Shutdown};

/// Protocol extensions this build serves, for the options table.
pub const EXTENSIONS: &[&str] = oxiserve_http::EXTENSIONS;

/// Serves every enabled endpoint until SIGINT or SIGTERM, then drains and
/// unloads (after stopping the repository `poller`, if any).
/// `sagemaker_registry` is the SageMaker endpoint's [`sagemaker::registry`].
pub fn serve(
    server: Server,
    options: &ServerOptions,
    metrics: Registry,
    poller: Option<Poller>,
    sagemaker_registry: Option<PathBuf>,
) -> ExitCode {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = worker_threads(options.http.http_thread_count, cpus);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("http")
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            log::error!("error: creating server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let exit_timeout = Duration::from_secs(u64::from(options.exit_timeout_secs));
    let (code, deadline) = runtime.block_on(run(
        server.clone(),
        options,
        metrics,
        poller,
        sagemaker_registry,
    ));
    runtime.shutdown_timeout(deadline.saturating_duration_since(Instant::now()));
    // Models finish their queued requests and unload (Python models run
    // `finalize`) within what is left of --exit-timeout-secs.
    log::info!("All models are stopped, unloading models");
    let (unloaded, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        server.shutdown();
        // The last traces are written (or exported) once no request is left.
        server.tracing().shutdown();
        let _ = unloaded.send(());
    });
    let left = deadline.saturating_duration_since(Instant::now());
    if waited.recv_timeout(left).is_err() {
        log::error!(
            "failed to stop server: Exit timeout expired ({} s). Exiting immediately.",
            exit_timeout.as_secs()
        );
        std::process::exit(1);
    }
    code
}

/// The runtime's worker threads: `--http-thread-count`, at most one per CPU,
/// or else half the CPUs (1 to 8). Backends (Python processes, ONNX Runtime
/// and libtorch threads) need the other half; with a worker on every CPU the
/// workers park and wake around each batch, and on 2 CPUs the Python
/// `add_sub` benchmark served ~15% fewer requests (docs/design/python-backend.md).
fn worker_threads(flag: Option<u32>, cpus: usize) -> usize {
    match flag {
        Some(n) => (n.max(1) as usize).min(cpus),
        None => cpus.div_ceil(2).clamp(1, 8),
    }
}

/// Serves until a signal (or an endpoint failure), then stops as Triton
/// does: the repository `poller` stops; the HTTP endpoint takes no new
/// connection and serves the open ones until they are done (each answer
/// closes its connection); the models refuse new inference requests while
/// those in flight finish (gRPC and metrics still serve); then the other
/// endpoints stop. Returns the exit status and the time by which everything
/// must be done (--exit-timeout-secs after the signal).
async fn run(
    server: Server,
    options: &ServerOptions,
    metrics: Registry,
    poller: Option<Poller>,
    sagemaker_registry: Option<PathBuf>,
) -> (ExitCode, Instant) {
    let exit_timeout = Duration::from_secs(u64::from(options.exit_timeout_secs));
    let fail = || (ExitCode::FAILURE, Instant::now() + exit_timeout);
    let signals = match signal::ShutdownSignals::install() {
        Ok(signals) => signals,
        Err(e) => {
            log::error!("error: creating server: cannot catch SIGINT/SIGTERM: {e}");
            return fail();
        }
    };
    let (stop, stopped) = watch::channel(false);
    let (stop_http, http_stopped) = watch::channel(false);
    let shutdown = Shutdown(stopped);
    // The SageMaker and Vertex AI endpoints are HTTP endpoints: they stop
    // with the HTTP one.
    let http_shutdown = Shutdown(http_stopped);
    // Each endpoint binds in turn; a failure to bind stops start-up.
    let started = [
        grpc::start(&server, options, shutdown.clone()).await,
        http::start(&server, options, http_shutdown.clone()).await,
        sagemaker::start(&server, options, sagemaker_registry, http_shutdown.clone()).await,
        vertex_ai::start(&server, options, &metrics, http_shutdown).await,
        metrics::start(metrics, options, shutdown.clone()).await,
    ];
    let mut services: Vec<Option<Service>> = Vec::new();
    for service in started {
        match service {
            Ok(service) => services.push(service),
            Err(e) => {
                log::error!("error: creating server: {e}");
                return fail();
            }
        }
    }
    let [grpc, http, sagemaker, vertex_ai, metrics] = <[Option<Service>; 5]>::try_from(services)
        .unwrap_or_else(|_| unreachable!("five endpoints were started"));
    let http: Vec<Service> = [http, sagemaker, vertex_ai].into_iter().flatten().collect();
    if grpc.is_none() && http.is_empty() && metrics.is_none() {
        log::warn!("no endpoint is enabled; waiting for a signal to exit");
    }
    let mut http_running = JoinSet::new();
    http_running.extend(http);
    let mut running = JoinSet::new();
    running.extend(grpc.into_iter().chain(metrics));
    let mut code = ExitCode::SUCCESS;
    tokio::select! {
        () = signals.received() => {}
        Some(ended) = running.join_next() => {
            log::error!("an endpoint stopped unexpectedly: {}", describe(ended));
            code = ExitCode::FAILURE;
        }
        Some(ended) = http_running.join_next() => {
            log::error!("an endpoint stopped unexpectedly: {}", describe(ended));
            code = ExitCode::FAILURE;
        }
    }
    let deadline = Instant::now() + exit_timeout;
    tokio::task::block_in_place(|| drop(poller));
    let drained = tokio::time::timeout_at(deadline.into(), async {
        let _ = stop_http.send(true);
        let http = all_stopped(&mut http_running).await;
        drain::in_flight_inferences(&server, deadline).await;
        let _ = stop.send(true);
        let others = all_stopped(&mut running).await;
        if http == ExitCode::SUCCESS {
            others
        } else {
            http
        }
    })
    .await;
    match drained {
        Ok(ExitCode::SUCCESS) => (code, deadline),
        Ok(failed) => (failed, deadline),
        Err(_) => {
            log::error!(
                "failed to stop server: Exit timeout expired ({} s) with requests in flight. Exiting immediately.",
                exit_timeout.as_secs()
            );
            std::process::exit(1);
        }
    }
}

/// Waits until every endpoint of `running` has stopped; FAILURE if one
/// failed while stopping.
async fn all_stopped(running: &mut JoinSet<Result<(), String>>) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    while let Some(ended) = running.join_next().await {
        if let Err(e) = ended.map_err(|e| e.to_string()).and_then(|r| r) {
            log::error!("an endpoint failed while stopping: {e}");
            code = ExitCode::FAILURE;
        }
    }
    code
}

fn describe(ended: Result<Result<(), String>, tokio::task::JoinError>) -> String {
    match ended {
        Ok(Ok(())) => "it returned".to_string(),
        Ok(Err(e)) => e,
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::worker_threads;

    #[test]
    fn worker_threads_default_to_half_the_cpus() {
        let got: Vec<usize> = [1, 2, 3, 16, 64]
            .into_iter()
            .map(|cpus| worker_threads(None, cpus))
            .collect();
        assert_eq!(got, [1, 1, 2, 8, 8]);
    }

    #[test]
    fn worker_threads_flag_is_capped_at_the_cpus() {
        assert_eq!(worker_threads(Some(8), 2), 2);
        assert_eq!(worker_threads(Some(3), 16), 3);
        assert_eq!(worker_threads(Some(0), 4), 1);
    }
}
