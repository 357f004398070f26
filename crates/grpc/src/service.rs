//! `inference.GRPCInferenceService`: each RPC handed to the file of its
//! concept, its error mapped to Triton's gRPC code.

use std::sync::Arc;

use oxiserve_core::Server;
use oxiserve_core::{HeaderForward, RestrictedCategory, Restrictions};
use oxiserve_proto::inference::{
    CudaSharedMemoryRegisterRequest, CudaSharedMemoryRegisterResponse,
    CudaSharedMemoryStatusRequest, CudaSharedMemoryStatusResponse,
    CudaSharedMemoryUnregisterRequest, CudaSharedMemoryUnregisterResponse, LogSettingsRequest,
    LogSettingsResponse, ModelConfigRequest, ModelConfigResponse, ModelInferRequest,
    ModelInferResponse, ModelMetadataRequest, ModelMetadataResponse, ModelReadyRequest,
    ModelReadyResponse, ModelStatisticsRequest, ModelStatisticsResponse, RepositoryIndexRequest,
    RepositoryIndexResponse, RepositoryModelLoadRequest, RepositoryModelLoadResponse,
    RepositoryModelUnloadRequest, RepositoryModelUnloadResponse, ServerLiveRequest,
    ServerLiveResponse, ServerMetadataRequest, ServerMetadataResponse, ServerReadyRequest,
    ServerReadyResponse, SystemSharedMemoryRegisterRequest, SystemSharedMemoryRegisterResponse,
    SystemSharedMemoryStatusRequest, SystemSharedMemoryStatusResponse,
    SystemSharedMemoryUnregisterRequest, SystemSharedMemoryUnregisterResponse, TraceSettingRequest,
    TraceSettingResponse, grpc_inference_service_server::GrpcInferenceService,
};
use oxiserve_types::{Parameters, Result as CoreResult};
use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming, metadata::MetadataMap};

use crate::{
    error::status, infer, logging, metadata, repository, restriction, shared_memory, statistics,
    stream, trace, traced::TraceContext,
};

/// The inference service over the core.
#[derive(Debug, Clone)]
pub(crate) struct InferenceService {
    server: Server,
    /// Becomes true when the server stops; open streams then wind down.
    stopping: watch::Receiver<bool>,
    restrictions: Arc<Restrictions>,
    /// Metadata forwarded as inference request parameters.
    header_forward: Option<HeaderForward>,
}

impl InferenceService {
    /// Serves `server` until `stopping` turns true.
    pub fn new(
        server: Server,
        stopping: watch::Receiver<bool>,
        restrictions: Arc<Restrictions>,
        header_forward: Option<HeaderForward>,
    ) -> Self {
        Self {
            server,
            stopping,
            restrictions,
            header_forward,
        }
    }

    /// The request parameters `--grpc-header-forward-pattern` makes of a
    /// call's metadata.
    fn forwarded(&self, metadata: &MetadataMap) -> Parameters {
        let mut parameters = Parameters::new();
        if let Some(forward) = &self.header_forward {
            let headers = metadata.clone().into_headers();
            let headers = headers.iter().map(|(k, v)| (k.as_str(), v.as_bytes()));
            forward.forward(headers, &mut parameters);
        }
        parameters
    }

    /// Refuses a call of `category` that lacks the header its restriction
    /// asks for.
    fn allow<T>(&self, category: RestrictedCategory, request: &Request<T>) -> Result<(), Status> {
        restriction::check(&self.restrictions, category, request.metadata())
    }

    /// [`InferenceService::allow`] for the model and repository RPCs, which
    /// also refuse after a failed start-up (`--exit-on-error=false`), as
    /// Triton's do: UNAVAILABLE "Server not ready".
    fn allow_model_api<T>(
        &self,
        category: RestrictedCategory,
        request: &Request<T>,
    ) -> Result<(), Status> {
        self.allow(category, request)?;
        match self.server.has_failed() {
            true => Err(Status::unavailable("Server not ready")),
            false => Ok(()),
        }
    }
}

/// A core result as a unary reply.
fn reply<T>(result: CoreResult<T>) -> Result<Response<T>, Status> {
    result.map(Response::new).map_err(status)
}

#[tonic::async_trait]
impl GrpcInferenceService for InferenceService {
    async fn server_live(
        &self,
        request: Request<ServerLiveRequest>,
    ) -> Result<Response<ServerLiveResponse>, Status> {
        self.allow(RestrictedCategory::Health, &request)?;
        Ok(Response::new(ServerLiveResponse {
            live: self.server.is_live(),
        }))
    }

    async fn server_ready(
        &self,
        request: Request<ServerReadyRequest>,
    ) -> Result<Response<ServerReadyResponse>, Status> {
        self.allow(RestrictedCategory::Health, &request)?;
        Ok(Response::new(ServerReadyResponse {
            ready: self.server.is_ready(),
        }))
    }

    async fn model_ready(
        &self,
        request: Request<ModelReadyRequest>,
    ) -> Result<Response<ModelReadyResponse>, Status> {
        self.allow_model_api(RestrictedCategory::Health, &request)?;
        reply(metadata::model_ready(&self.server, request.into_inner()))
    }

    async fn server_metadata(
        &self,
        request: Request<ServerMetadataRequest>,
    ) -> Result<Response<ServerMetadataResponse>, Status> {
        self.allow(RestrictedCategory::Metadata, &request)?;
        Ok(Response::new(metadata::server_metadata(&self.server)))
    }

    async fn model_metadata(
        &self,
        request: Request<ModelMetadataRequest>,
    ) -> Result<Response<ModelMetadataResponse>, Status> {
        self.allow_model_api(RestrictedCategory::Metadata, &request)?;
        reply(metadata::model_metadata(&self.server, request.into_inner()))
    }

    async fn model_infer(
        &self,
        request: Request<ModelInferRequest>,
    ) -> Result<Response<ModelInferResponse>, Status> {
        self.allow_model_api(RestrictedCategory::Inference, &request)?;
        let context = TraceContext::of(request.metadata());
        let forwarded = self.forwarded(request.metadata());
        let message = request.into_inner();
        reply(infer::model_infer(&self.server, context, forwarded, message).await)
    }

    type ModelStreamInferStream = stream::Outbound;

    async fn model_stream_infer(
        &self,
        request: Request<Streaming<ModelInferRequest>>,
    ) -> Result<Response<Self::ModelStreamInferStream>, Status> {
        self.allow_model_api(RestrictedCategory::Inference, &request)?;
        let forwarded = self.forwarded(request.metadata());
        let outbound = stream::start(
            self.server.clone(),
            request,
            forwarded,
            self.stopping.clone(),
        );
        Ok(Response::new(outbound))
    }

    async fn model_config(
        &self,
        request: Request<ModelConfigRequest>,
    ) -> Result<Response<ModelConfigResponse>, Status> {
        self.allow_model_api(RestrictedCategory::ModelConfig, &request)?;
        reply(metadata::model_config(&self.server, request.into_inner()))
    }

    async fn model_statistics(
        &self,
        request: Request<ModelStatisticsRequest>,
    ) -> Result<Response<ModelStatisticsResponse>, Status> {
        self.allow_model_api(RestrictedCategory::Statistics, &request)?;
        reply(statistics::model_statistics(
            &self.server,
            request.into_inner(),
        ))
    }

    async fn repository_index(
        &self,
        request: Request<RepositoryIndexRequest>,
    ) -> Result<Response<RepositoryIndexResponse>, Status> {
        self.allow_model_api(RestrictedCategory::ModelRepository, &request)?;
        repository::index(&self.server, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn repository_model_load(
        &self,
        request: Request<RepositoryModelLoadRequest>,
    ) -> Result<Response<RepositoryModelLoadResponse>, Status> {
        self.allow_model_api(RestrictedCategory::ModelRepository, &request)?;
        repository::load(&self.server, request.into_inner()).await?;
        Ok(Response::new(RepositoryModelLoadResponse {}))
    }

    async fn repository_model_unload(
        &self,
        request: Request<RepositoryModelUnloadRequest>,
    ) -> Result<Response<RepositoryModelUnloadResponse>, Status> {
        self.allow_model_api(RestrictedCategory::ModelRepository, &request)?;
        repository::unload(&self.server, request.into_inner()).await?;
        Ok(Response::new(RepositoryModelUnloadResponse {}))
    }

    async fn system_shared_memory_status(
        &self,
        request: Request<SystemSharedMemoryStatusRequest>,
    ) -> Result<Response<SystemSharedMemoryStatusResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        reply(shared_memory::system_status(
            &self.server,
            request.into_inner(),
        ))
    }

    async fn system_shared_memory_register(
        &self,
        request: Request<SystemSharedMemoryRegisterRequest>,
    ) -> Result<Response<SystemSharedMemoryRegisterResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        shared_memory::system_register(&self.server, request.into_inner()).map_err(status)?;
        Ok(Response::new(SystemSharedMemoryRegisterResponse {}))
    }

    async fn system_shared_memory_unregister(
        &self,
        request: Request<SystemSharedMemoryUnregisterRequest>,
    ) -> Result<Response<SystemSharedMemoryUnregisterResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        shared_memory::system_unregister(&self.server, request.into_inner()).map_err(status)?;
        Ok(Response::new(SystemSharedMemoryUnregisterResponse {}))
    }

    async fn cuda_shared_memory_status(
        &self,
        request: Request<CudaSharedMemoryStatusRequest>,
    ) -> Result<Response<CudaSharedMemoryStatusResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        reply(shared_memory::cuda_status_of(
            &self.server,
            request.into_inner(),
        ))
    }

    async fn cuda_shared_memory_register(
        &self,
        request: Request<CudaSharedMemoryRegisterRequest>,
    ) -> Result<Response<CudaSharedMemoryRegisterResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        shared_memory::cuda_register_region(&self.server, request.into_inner()).map_err(status)?;
        Ok(Response::new(CudaSharedMemoryRegisterResponse {}))
    }

    async fn cuda_shared_memory_unregister(
        &self,
        request: Request<CudaSharedMemoryUnregisterRequest>,
    ) -> Result<Response<CudaSharedMemoryUnregisterResponse>, Status> {
        self.allow(RestrictedCategory::SharedMemory, &request)?;
        Ok(Response::new(CudaSharedMemoryUnregisterResponse {}))
    }

    async fn trace_setting(
        &self,
        request: Request<TraceSettingRequest>,
    ) -> Result<Response<TraceSettingResponse>, Status> {
        self.allow(RestrictedCategory::Trace, &request)?;
        reply(trace::trace_setting(&self.server, request.into_inner()))
    }

    async fn log_settings(
        &self,
        request: Request<LogSettingsRequest>,
    ) -> Result<Response<LogSettingsResponse>, Status> {
        self.allow(RestrictedCategory::Logging, &request)?;
        reply(logging::log_settings(&self.server, request.into_inner()))
    }
}
