//! Binding the endpoints and serving until a signal arrives.

use std::{net::SocketAddr, process::ExitCode, time::Duration};

use oxiserve_core::Server;
use tokio::net::TcpListener;

use crate::cli::ServerOptions;

/// Protocol extensions this build serves, for the options table.
pub const EXTENSIONS: &[&str] = oxiserve_http::EXTENSIONS;

/// Serves HTTP until SIGINT or SIGTERM, then drains and unloads.
pub fn serve(server: Server, options: &ServerOptions) -> ExitCode {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(options.http.http_thread_count.max(1) as usize);
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
    let code = runtime.block_on(run(server.clone(), options));
    let timeout = Duration::from_secs(u64::from(options.exit_timeout_secs));
    runtime.shutdown_timeout(timeout);
    server.shutdown();
    code
}

async fn run(server: Server, options: &ServerOptions) -> ExitCode {
    if !options.http.allow_http {
        log::warn!("no endpoint is enabled (--allow-http=false); waiting for a signal to exit");
        shutdown_signal().await;
        return ExitCode::SUCCESS;
    }
    let address = format!("{}:{}", options.http.http_address, options.http.http_port);
    let listener = match bind(&address).await {
        Ok(listener) => listener,
        Err(e) => {
            log::error!("error: creating server: failed to start HTTP service at {address}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bound: SocketAddr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            log::error!("error: creating server: {e}");
            return ExitCode::FAILURE;
        }
    };
    log::info!(
        "Started HTTPService at {}:{}",
        options.http.http_address,
        bound.port()
    );
    let http_options = oxiserve_http::HttpOptions {
        max_body_bytes: options.http.http_max_input_size,
    };
    match oxiserve_http::serve(listener, server, http_options, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("HTTP service failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn bind(address: &str) -> std::io::Result<TcpListener> {
    TcpListener::bind(address).await
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => log::info!("Signal (2) received."),
        _ = terminate => log::info!("Signal (15) received."),
    }
}
