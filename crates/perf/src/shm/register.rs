//! Registering and unregistering the regions with the server, over the
//! protocol the run uses.

use oxiserve_proto::inference::{
    SystemSharedMemoryRegisterRequest, SystemSharedMemoryRegisterResponse,
    SystemSharedMemoryUnregisterRequest, SystemSharedMemoryUnregisterResponse,
};
use serde_json::json;

use super::Region;
use crate::{
    error::Result,
    grpc::{api::unary, conn::GrpcConn},
    http::{api, body::OnceBody, conn::HttpConn},
    target::Target,
};

/// A connection for the shared memory extension.
pub enum Registrar {
    Http(Box<HttpConn>),
    Grpc(Box<GrpcConn<OnceBody>>),
}

impl Registrar {
    /// Connects over gRPC or HTTP.
    pub async fn connect(target: &Target, grpc: bool) -> Result<Self> {
        Ok(match grpc {
            true => Registrar::Grpc(Box::new(GrpcConn::connect(target).await?)),
            false => Registrar::Http(Box::new(HttpConn::connect(target).await?)),
        })
    }

    /// Registers `region` under its name.
    pub async fn register(&mut self, region: &Region) -> Result<()> {
        match self {
            Registrar::Http(conn) => {
                let path = format!("/v2/systemsharedmemory/region/{}/register", region.name);
                let body = json!({"key": region.key, "offset": 0, "byte_size": region.size});
                api::call(conn, hyper::Method::POST, &path, Some(&body))
                    .await
                    .map(drop)
            }
            Registrar::Grpc(conn) => {
                let request = SystemSharedMemoryRegisterRequest {
                    name: region.name.clone(),
                    key: region.key.clone(),
                    offset: 0,
                    byte_size: region.size,
                };
                unary::<_, SystemSharedMemoryRegisterResponse>(
                    conn,
                    "SystemSharedMemoryRegister",
                    &request,
                )
                .await
                .map(drop)
            }
        }
    }

    /// Unregisters the region named `name`.
    pub async fn unregister(&mut self, name: &str) -> Result<()> {
        match self {
            Registrar::Http(conn) => {
                let path = format!("/v2/systemsharedmemory/region/{name}/unregister");
                api::call(conn, hyper::Method::POST, &path, None)
                    .await
                    .map(drop)
            }
            Registrar::Grpc(conn) => {
                let request = SystemSharedMemoryUnregisterRequest { name: name.into() };
                unary::<_, SystemSharedMemoryUnregisterResponse>(
                    conn,
                    "SystemSharedMemoryUnregister",
                    &request,
                )
                .await
                .map(drop)
            }
        }
    }
}
