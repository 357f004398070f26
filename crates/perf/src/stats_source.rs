//! Where statistics snapshots come from: the statistics endpoint, over the
//! protocol the run uses.

use oxiserve_client::Client;

use crate::{error::Result, server_stats::ServerStats};

/// Fetches one model's statistics.
pub struct StatsSource {
    client: Client,
    model: String,
    version: String,
}

impl StatsSource {
    /// Statistics of `model` (one version, or all) from `client`'s server.
    pub fn new(client: Client, model: &str, version: Option<&str>) -> Self {
        StatsSource {
            client,
            model: model.into(),
            version: version.unwrap_or_default().into(),
        }
    }

    /// A snapshot of the cumulative counters.
    pub async fn fetch(&self) -> Result<ServerStats> {
        let answer = self
            .client
            .model_statistics(&self.model, &self.version)
            .await?;
        Ok(ServerStats::of(&answer, &self.model))
    }
}
