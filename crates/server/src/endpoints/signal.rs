//! SIGINT and SIGTERM.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The shutdown signals, caught from the moment they are installed (before
/// any endpoint starts, so a signal sent as soon as the server says it
/// started still shuts it down gracefully).
pub(super) struct ShutdownSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl ShutdownSignals {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Completes on SIGINT or SIGTERM, logging which, as Triton does.
    pub async fn received(mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => log::info!("Signal (2) received."),
            _ = self.terminate.recv() => log::info!("Signal (15) received."),
        }
    }
}
