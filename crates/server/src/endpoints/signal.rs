//! SIGINT and SIGTERM.

/// Completes on SIGINT or SIGTERM, logging which, as Triton does.
pub(super) async fn shutdown_signal() {
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
