//! Registering and unregistering the shared memory regions with the server,
//! over the protocol the run uses.

use oxiserve_proto::inference::{
    SystemSharedMemoryRegisterRequest, SystemSharedMemoryRegisterResponse,
    SystemSharedMemoryUnregisterRequest, SystemSharedMemoryUnregisterResponse,
};
use serde_json::json;

use crate::{
    control::ControlConn, error::Result, grpc::api::unary, http::api, shm::Region, target::Target,
};

/// A connection for the shared memory extension.
pub struct Registrar(ControlConn);

impl Registrar {
    /// Connects over gRPC or HTTP.
    pub async fn connect(target: &Target, grpc: bool) -> Result<Self> {
        Ok(Self(ControlConn::connect(target, grpc).await?))
    }

    /// Registers `region` under its name.
    pub async fn register(&mut self, region: &Region) -> Result<()> {
        match &mut self.0 {
            ControlConn::Http(conn) => {
                let path = format!("/v2/systemsharedmemory/region/{}/register", region.name);
                let body = json!({"key": region.key, "offset": 0, "byte_size": region.size});
                api::call(conn, hyper::Method::POST, &path, Some(&body))
                    .await
                    .map(drop)
            }
            ControlConn::Grpc(conn) => {
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
        match &mut self.0 {
            ControlConn::Http(conn) => {
                let path = format!("/v2/systemsharedmemory/region/{name}/unregister");
                api::call(conn, hyper::Method::POST, &path, None)
                    .await
                    .map(drop)
            }
            ControlConn::Grpc(conn) => {
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
