//! A running endpoint, and what tells it to stop.

use std::{future::Future, pin::Pin};

use tokio::sync::watch;

/// A running endpoint; it ends when its shutdown future completes.
pub(super) type Service = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Completes when the server is told to stop.
#[derive(Clone)]
pub(crate) struct Shutdown(pub(super) watch::Receiver<bool>);

impl Shutdown {
    /// Waits for the stop.
    pub async fn wait(mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}
