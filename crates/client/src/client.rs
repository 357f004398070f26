//! [`Client`]: HTTP or gRPC, chosen at run time (a command line's `-i`),
//! with the calls both protocols have.

use oxiserve_proto::{
    ModelConfig,
    inference::{
        ModelMetadataResponse, ModelStatisticsResponse, RepositoryIndexResponse,
        ServerMetadataResponse, SystemSharedMemoryStatusResponse,
    },
};

use crate::{
    error::Result, grpc::GrpcClient, http::HttpClient, request::InferRequest, result::InferResult,
};

/// The protocol of a [`Client`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// KServe v2 HTTP/REST.
    Http,
    /// KServe v2 gRPC.
    Grpc,
}

/// A client of either protocol; each call does what the protocol's own
/// client does.
///
/// ```no_run
/// # async fn f() -> oxiserve_client::Result<()> {
/// use oxiserve_client::{Client, Protocol};
///
/// let client = Client::connect("localhost:8001", Protocol::Grpc).await?;
/// let stats = client.model_statistics("identity", "").await?;
/// println!("{} inferences", stats.model_stats.iter().map(|m| m.inference_count).sum::<u64>());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub enum Client {
    /// Over HTTP.
    Http(HttpClient),
    /// Over gRPC.
    Grpc(GrpcClient),
}

/// Calls the same method of either client.
macro_rules! either {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            Client::Http(c) => c.$method($($arg),*).await,
            Client::Grpc(c) => c.$method($($arg),*).await,
        }
    };
}

impl Client {
    /// A client of the server at `url` (`host:port`) over `protocol`.
    pub async fn connect(url: &str, protocol: Protocol) -> Result<Self> {
        Ok(match protocol {
            Protocol::Http => Client::Http(HttpClient::new(url)?),
            Protocol::Grpc => Client::Grpc(GrpcClient::connect(url).await?),
        })
    }

    /// Whether the server is live.
    pub async fn is_server_live(&self) -> Result<bool> {
        either!(self.is_server_live())
    }

    /// Whether the server is ready.
    pub async fn is_server_ready(&self) -> Result<bool> {
        either!(self.is_server_ready())
    }

    /// Whether `model` (of `version`; `""`: the server's choice) is ready.
    pub async fn is_model_ready(&self, model: &str, version: &str) -> Result<bool> {
        either!(self.is_model_ready(model, version))
    }

    /// The server's name, version and extensions.
    pub async fn server_metadata(&self) -> Result<ServerMetadataResponse> {
        either!(self.server_metadata())
    }

    /// A model's versions, platform, inputs and outputs.
    pub async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMetadataResponse> {
        either!(self.model_metadata(model, version))
    }

    /// A model's configuration.
    pub async fn model_config(&self, model: &str, version: &str) -> Result<ModelConfig> {
        either!(self.model_config(model, version))
    }

    /// Inference statistics of `model` (`""`: every model) and `version`.
    pub async fn model_statistics(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelStatisticsResponse> {
        either!(self.model_statistics(model, version))
    }

    /// The models of the repository and their states.
    pub async fn repository_index(&self, ready: bool) -> Result<RepositoryIndexResponse> {
        either!(self.repository_index(ready))
    }

    /// Loads (or reloads) `model`, maybe with a JSON `config` and `files`.
    pub async fn load_model(
        &self,
        model: &str,
        config: Option<&str>,
        files: &[(&str, &[u8])],
    ) -> Result<()> {
        either!(self.load_model(model, config, files))
    }

    /// Unloads `model` (and the models only it used, with `unload_dependents`).
    pub async fn unload_model(&self, model: &str, unload_dependents: bool) -> Result<()> {
        either!(self.unload_model(model, unload_dependents))
    }

    /// The registered system shared memory regions (`""`: all).
    pub async fn system_shared_memory_status(
        &self,
        region: &str,
    ) -> Result<SystemSharedMemoryStatusResponse> {
        either!(self.system_shared_memory_status(region))
    }

    /// Registers the shared memory object `key` as region `name`.
    pub async fn register_system_shared_memory(
        &self,
        name: &str,
        key: &str,
        byte_size: u64,
        offset: u64,
    ) -> Result<()> {
        either!(self.register_system_shared_memory(name, key, byte_size, offset))
    }

    /// Unregisters region `name` (`""`: every region).
    pub async fn unregister_system_shared_memory(&self, name: &str) -> Result<()> {
        either!(self.unregister_system_shared_memory(name))
    }

    /// Runs `request` and returns its response.
    pub async fn infer(&self, request: &InferRequest) -> Result<InferResult> {
        either!(self.infer(request))
    }
}
