//! `grpc.health.v1.Health/Check`: serving while the server is ready.

use oxiserve_core::Server;
use oxiserve_proto::health::{
    HealthCheckRequest, HealthCheckResponse, health_check_response::ServingStatus,
    health_server::Health,
};
use tonic::{Request, Response, Status};

/// The standard health service over the core.
#[derive(Debug, Clone)]
pub(crate) struct HealthService {
    server: Server,
}

impl HealthService {
    /// Answers for `server`.
    pub fn new(server: Server) -> Self {
        Self { server }
    }
}

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(
        &self,
        _request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        let status = if self.server.is_ready() {
            ServingStatus::Serving
        } else {
            ServingStatus::NotServing
        };
        Ok(Response::new(HealthCheckResponse {
            status: status as i32,
        }))
    }
}
