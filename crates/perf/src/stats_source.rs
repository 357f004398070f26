//! Where statistics snapshots come from: the HTTP statistics endpoint or
//! the ModelStatistics RPC.

use crate::{
    error::Result,
    grpc::api::GrpcStats,
    http::{api, conn::HttpConn},
    server_stats::ServerStats,
    target::Target,
};

/// Fetches one model's statistics.
pub enum StatsSource {
    Http {
        conn: Box<HttpConn>,
        path: String,
        model: String,
    },
    Grpc(Box<GrpcStats>),
}

impl StatsSource {
    /// Statistics of `model` (one version, or all) over HTTP.
    pub async fn http(target: &Target, model: &str, version: Option<&str>) -> Result<Self> {
        Ok(StatsSource::Http {
            conn: Box::new(HttpConn::connect(target).await?),
            path: format!("{}/stats", api::model_path(model, version)),
            model: model.to_string(),
        })
    }

    /// Statistics of `model` (one version, or all) over gRPC.
    pub async fn grpc(target: &Target, model: &str, version: Option<&str>) -> Result<Self> {
        Ok(StatsSource::Grpc(Box::new(
            GrpcStats::connect(target, model, version).await?,
        )))
    }

    /// A snapshot of the cumulative counters.
    pub async fn fetch(&mut self) -> Result<ServerStats> {
        match self {
            StatsSource::Http { conn, path, model } => {
                let value = api::get(conn, path).await?;
                ServerStats::from_json(&value, model)
            }
            StatsSource::Grpc(grpc) => grpc.fetch().await,
        }
    }
}
