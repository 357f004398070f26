//! [`GrpcClient`]: every RPC of `inference.GRPCInferenceService` but the
//! CUDA shared memory, trace and log ones, on one HTTP/2 connection.

use std::collections::HashMap;

use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelConfigRequest, ModelMetadataRequest, ModelMetadataResponse, ModelReadyRequest,
        ModelRepositoryParameter, ModelStatisticsRequest, ModelStatisticsResponse,
        RepositoryIndexRequest, RepositoryIndexResponse, RepositoryModelLoadRequest,
        RepositoryModelUnloadRequest, ServerLiveRequest, ServerMetadataRequest,
        ServerMetadataResponse, ServerReadyRequest, SystemSharedMemoryRegisterRequest,
        SystemSharedMemoryStatusRequest, SystemSharedMemoryStatusResponse,
        SystemSharedMemoryUnregisterRequest,
        grpc_inference_service_client::GrpcInferenceServiceClient,
        model_repository_parameter::ParameterChoice,
    },
};
use tonic::transport::{Channel, Endpoint};

use super::{
    convert::{infer_result, model_infer_request},
    stream::InferStream,
};
use crate::{
    address::with_scheme,
    error::{Error, Result},
    request::InferRequest,
    result::InferResult,
};

/// The tonic client of the service.
type Service = GrpcInferenceServiceClient<Channel>;

/// A client of one server's gRPC endpoint. Cloning it is cheap: clones share
/// its connection.
///
/// ```no_run
/// # async fn f() -> oxiserve_client::Result<()> {
/// let client = oxiserve_client::GrpcClient::connect("localhost:8001").await?;
/// let config = client.model_config("identity", "").await?;
/// println!("max_batch_size {}", config.max_batch_size);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct GrpcClient {
    service: Service,
}

impl GrpcClient {
    /// Connects to the server at `url` (`host:port`, or `http://host:port`).
    /// Messages of any size are sent and taken.
    pub async fn connect(url: &str) -> Result<Self> {
        let endpoint = Endpoint::from_shared(with_scheme(url))
            .map_err(|_| Error::invalid_arg(format!("expected host:port, got '{url}'")))?
            .tcp_nodelay(true);
        let service = GrpcInferenceServiceClient::new(endpoint.connect().await?)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX);
        Ok(GrpcClient { service })
    }

    /// `ServerLive`: whether the server is live.
    pub async fn is_server_live(&self) -> Result<bool> {
        let answer = self.service().server_live(ServerLiveRequest {}).await?;
        Ok(answer.into_inner().live)
    }

    /// `ServerReady`: whether the server is ready.
    pub async fn is_server_ready(&self) -> Result<bool> {
        let answer = self.service().server_ready(ServerReadyRequest {}).await?;
        Ok(answer.into_inner().ready)
    }

    /// Whether `model` (of `version`; `""`: the server's choice) is ready.
    pub async fn is_model_ready(&self, model: &str, version: &str) -> Result<bool> {
        let request = ModelReadyRequest {
            name: model.into(),
            version: version.into(),
        };
        Ok(self
            .service()
            .model_ready(request)
            .await?
            .into_inner()
            .ready)
    }

    /// `ServerMetadata`: the server's name, version and extensions.
    pub async fn server_metadata(&self) -> Result<ServerMetadataResponse> {
        let answer = self
            .service()
            .server_metadata(ServerMetadataRequest {})
            .await?;
        Ok(answer.into_inner())
    }

    /// A model's versions, platform, inputs and outputs.
    pub async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMetadataResponse> {
        let request = ModelMetadataRequest {
            name: model.into(),
            version: version.into(),
        };
        Ok(self.service().model_metadata(request).await?.into_inner())
    }

    /// A model's configuration.
    pub async fn model_config(&self, model: &str, version: &str) -> Result<ModelConfig> {
        let request = ModelConfigRequest {
            name: model.into(),
            version: version.into(),
        };
        let answer = self.service().model_config(request).await?.into_inner();
        answer
            .config
            .ok_or_else(|| Error::protocol(format!("ModelConfig of '{model}' has no config")))
    }

    /// Inference statistics of `model` (`""`: every model) and `version`.
    pub async fn model_statistics(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelStatisticsResponse> {
        let request = ModelStatisticsRequest {
            name: model.into(),
            version: version.into(),
        };
        Ok(self.service().model_statistics(request).await?.into_inner())
    }

    /// The models of the repository and their states; only the ready ones
    /// when `ready`.
    pub async fn repository_index(&self, ready: bool) -> Result<RepositoryIndexResponse> {
        let request = RepositoryIndexRequest {
            repository_name: String::new(),
            ready,
        };
        Ok(self.service().repository_index(request).await?.into_inner())
    }

    /// Loads (or reloads) `model`, with `config` (JSON) instead of its
    /// `config.pbtxt` and `files` (path in the model folder, such as
    /// `1/model.py`, and contents) instead of its folder, when given.
    pub async fn load_model(
        &self,
        model: &str,
        config: Option<&str>,
        files: &[(&str, &[u8])],
    ) -> Result<()> {
        let parameter = |choice| ModelRepositoryParameter {
            parameter_choice: Some(choice),
        };
        let mut parameters = HashMap::new();
        if let Some(config) = config {
            let config = parameter(ParameterChoice::StringParam(config.into()));
            parameters.insert("config".to_string(), config);
        }
        for (path, contents) in files {
            let file = parameter(ParameterChoice::BytesParam(contents.to_vec()));
            parameters.insert(format!("file:{path}"), file);
        }
        let request = RepositoryModelLoadRequest {
            repository_name: String::new(),
            model_name: model.into(),
            parameters,
        };
        self.service().repository_model_load(request).await?;
        Ok(())
    }

    /// Unloads `model`, and with `unload_dependents` the models only it
    /// used (an ensemble's members).
    pub async fn unload_model(&self, model: &str, unload_dependents: bool) -> Result<()> {
        let dependents = ModelRepositoryParameter {
            parameter_choice: Some(ParameterChoice::BoolParam(unload_dependents)),
        };
        let request = RepositoryModelUnloadRequest {
            repository_name: String::new(),
            model_name: model.into(),
            parameters: HashMap::from([("unload_dependents".to_string(), dependents)]),
        };
        self.service().repository_model_unload(request).await?;
        Ok(())
    }

    /// The registered system shared memory regions (`""`: all), by name.
    pub async fn system_shared_memory_status(
        &self,
        region: &str,
    ) -> Result<SystemSharedMemoryStatusResponse> {
        let request = SystemSharedMemoryStatusRequest {
            name: region.into(),
        };
        let answer = self.service().system_shared_memory_status(request).await?;
        Ok(answer.into_inner())
    }

    /// Registers the shared memory object `key` as region `name`: its
    /// `byte_size` bytes from `offset`.
    pub async fn register_system_shared_memory(
        &self,
        name: &str,
        key: &str,
        byte_size: u64,
        offset: u64,
    ) -> Result<()> {
        let request = SystemSharedMemoryRegisterRequest {
            name: name.into(),
            key: key.into(),
            offset,
            byte_size,
        };
        self.service()
            .system_shared_memory_register(request)
            .await?;
        Ok(())
    }

    /// Unregisters region `name` (`""`: every region).
    pub async fn unregister_system_shared_memory(&self, name: &str) -> Result<()> {
        let request = SystemSharedMemoryUnregisterRequest { name: name.into() };
        self.service()
            .system_shared_memory_unregister(request)
            .await?;
        Ok(())
    }

    /// `ModelInfer`: runs `request` and returns its response.
    ///
    /// ```no_run
    /// # async fn f() -> oxiserve_client::Result<()> {
    /// use oxiserve_client::{GrpcClient, InferInput, InferRequest};
    ///
    /// let client = GrpcClient::connect("localhost:8001").await?;
    /// let text = ndarray::arr2(&[["hello"]]);
    /// let request = InferRequest::new("identity_bytes").input(InferInput::from_strings("INPUT0", &text));
    /// let result = client.infer(&request).await?;
    /// println!("{}", result.as_strings("OUTPUT0")?);
    /// # Ok(()) }
    /// ```
    pub async fn infer(&self, request: &InferRequest) -> Result<InferResult> {
        let message = model_infer_request(request);
        infer_result(self.service().model_infer(message).await?.into_inner())
    }

    /// Opens a `ModelStreamInfer` stream: requests go in as they are sent,
    /// responses come out as the server writes them (several per request
    /// from a decoupled model).
    pub fn stream_infer(&self) -> InferStream {
        InferStream::open(self.service())
    }

    /// A handle on the shared connection for one call.
    fn service(&self) -> Service {
        self.service.clone()
    }
}
