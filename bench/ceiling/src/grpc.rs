//! The gRPC side: a bare tonic `inference.GRPCInferenceService` whose `ModelInfer` echoes the
//! inputs (`raw_input_contents`, shared, not copied, or typed `contents`) as outputs
//! (INPUT<n> -> OUTPUT<n>). Besides, what oxiserve-perf and tritonclient call first:
//! `ServerLive`, `ServerReady`, `ModelReady`, and the identity model's `ModelMetadata` and
//! `ModelConfig` (static). Every other method answers UNIMPLEMENTED.

use tonic::{
    Request, Response, Status,
    transport::{Server, server::TcpIncoming},
};

use crate::model;

/// Generated types and server code of Triton's `inference` protobuf package.
#[allow(clippy::all)]
mod inference {
    include!(concat!(env!("OUT_DIR"), "/inference.rs"));
}

use inference::{
    DataType, ModelConfig, ModelConfigRequest, ModelConfigResponse, ModelInferRequest,
    ModelInferResponse, ModelInput, ModelMetadataRequest, ModelMetadataResponse, ModelOutput,
    ModelReadyRequest, ModelReadyResponse, ServerLiveRequest, ServerLiveResponse,
    ServerReadyRequest, ServerReadyResponse,
    grpc_inference_service_server::{GrpcInferenceService, GrpcInferenceServiceServer},
    model_infer_response::InferOutputTensor,
    model_metadata_response::TensorMetadata,
};

/// Serves the service on `listener` (TCP_NODELAY, as oxiserve's gRPC frontend) until it fails.
pub async fn serve(listener: tokio::net::TcpListener) -> Result<(), tonic::transport::Error> {
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    Server::builder()
        .serve_with_incoming(GrpcInferenceServiceServer::new(Ceiling), incoming)
        .await
}

struct Ceiling;

/// NOT_FOUND unless `name` is the identity model.
fn known(name: &str) -> Result<(), Status> {
    match name == model::NAME {
        true => Ok(()),
        false => Err(Status::not_found(format!(
            "Request for unknown model: '{name}' is not found"
        ))),
    }
}

#[tonic::async_trait]
impl GrpcInferenceService for Ceiling {
    async fn server_live(
        &self,
        _: Request<ServerLiveRequest>,
    ) -> Result<Response<ServerLiveResponse>, Status> {
        Ok(Response::new(ServerLiveResponse { live: true }))
    }

    async fn server_ready(
        &self,
        _: Request<ServerReadyRequest>,
    ) -> Result<Response<ServerReadyResponse>, Status> {
        Ok(Response::new(ServerReadyResponse { ready: true }))
    }

    async fn model_ready(
        &self,
        request: Request<ModelReadyRequest>,
    ) -> Result<Response<ModelReadyResponse>, Status> {
        let ready = request.get_ref().name == model::NAME;
        Ok(Response::new(ModelReadyResponse { ready }))
    }

    async fn model_metadata(
        &self,
        request: Request<ModelMetadataRequest>,
    ) -> Result<Response<ModelMetadataResponse>, Status> {
        known(&request.get_ref().name)?;
        let tensor = |name: &str| TensorMetadata {
            name: name.into(),
            datatype: model::DATATYPE.into(),
            shape: [&[-1][..], &model::DIMS].concat(),
        };
        Ok(Response::new(ModelMetadataResponse {
            name: model::NAME.into(),
            versions: vec!["1".into()],
            platform: "identity".into(),
            inputs: vec![tensor(model::INPUT)],
            outputs: vec![tensor(model::OUTPUT)],
        }))
    }

    async fn model_config(
        &self,
        request: Request<ModelConfigRequest>,
    ) -> Result<Response<ModelConfigResponse>, Status> {
        known(&request.get_ref().name)?;
        let config = ModelConfig {
            name: model::NAME.into(),
            backend: "identity".into(),
            max_batch_size: model::MAX_BATCH_SIZE,
            input: vec![ModelInput {
                name: model::INPUT.into(),
                data_type: DataType::TypeFp32.into(),
                dims: model::DIMS.to_vec(),
                ..Default::default()
            }],
            output: vec![ModelOutput {
                name: model::OUTPUT.into(),
                data_type: DataType::TypeFp32.into(),
                dims: model::DIMS.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        };
        Ok(Response::new(ModelConfigResponse {
            config: Some(config),
        }))
    }

    async fn model_infer(
        &self,
        request: Request<ModelInferRequest>,
    ) -> Result<Response<ModelInferResponse>, Status> {
        let req = request.into_inner();
        let outputs = req
            .inputs
            .into_iter()
            .map(|t| InferOutputTensor {
                name: model::output_name(&t.name),
                datatype: t.datatype,
                shape: t.shape,
                contents: t.contents,
                ..Default::default()
            })
            .collect();
        Ok(Response::new(ModelInferResponse {
            model_name: req.model_name,
            model_version: "1".into(),
            id: req.id,
            outputs,
            raw_output_contents: req.raw_input_contents,
            ..Default::default()
        }))
    }
}
