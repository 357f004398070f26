//! A connection to the server's control APIs (repository, shared memory
//! registration) over the protocol the run uses.

use crate::{
    error::Result,
    grpc::conn::GrpcConn,
    http::{body::OnceBody, conn::HttpConn},
    target::Target,
};

/// An HTTP or gRPC connection for control requests.
pub enum ControlConn {
    Http(Box<HttpConn>),
    Grpc(Box<GrpcConn<OnceBody>>),
}

impl ControlConn {
    /// Connects to `target`'s gRPC or HTTP endpoint.
    pub async fn connect(target: &Target, grpc: bool) -> Result<Self> {
        Ok(match grpc {
            true => ControlConn::Grpc(Box::new(GrpcConn::connect(target).await?)),
            false => ControlConn::Http(Box::new(HttpConn::connect(target).await?)),
        })
    }
}
