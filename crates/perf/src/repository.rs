//! The part of the repository API `analyze` uses, over HTTP or gRPC: a
//! model's configuration (as Triton's JSON) and a load with a configuration
//! override.

use std::collections::HashMap;

use oxiserve_proto::inference::{
    ModelConfigRequest, ModelConfigResponse, ModelRepositoryParameter, RepositoryModelLoadRequest,
    RepositoryModelLoadResponse, model_repository_parameter::ParameterChoice,
};
use serde_json::{Value, json};

use crate::{
    control::ControlConn,
    error::{Error, Result},
    grpc::api::unary,
    http::api,
    target::Target,
};

/// A connection to the server's repository API.
pub struct Repository(ControlConn);

impl Repository {
    /// Connects to `target`'s gRPC or HTTP endpoint.
    pub async fn connect(target: &Target, grpc: bool) -> Result<Self> {
        Ok(Self(ControlConn::connect(target, grpc).await?))
    }

    /// The model's configuration as `GET /v2/models/M/config` gives it.
    pub async fn config(&mut self, model: &str) -> Result<Value> {
        match &mut self.0 {
            ControlConn::Http(conn) => {
                api::get(conn, &format!("{}/config", api::model_path(model, None))).await
            }
            ControlConn::Grpc(conn) => {
                let request = ModelConfigRequest {
                    name: model.into(),
                    version: String::new(),
                };
                let answer: ModelConfigResponse = unary(conn, "ModelConfig", &request).await?;
                let config = answer.config.ok_or_else(|| {
                    Error::new(format!("ModelConfig: no configuration of {model}"))
                })?;
                Ok(oxiserve_config::to_json(&config))
            }
        }
    }

    /// (Re)loads `model` with `config` instead of its `config.pbtxt`.
    pub async fn load(&mut self, model: &str, config: &Value) -> Result<()> {
        match &mut self.0 {
            ControlConn::Http(conn) => {
                let body = json!({"parameters": {"config": config.to_string()}});
                let path = format!("/v2/repository/models/{model}/load");
                api::call(conn, hyper::Method::POST, &path, Some(&body))
                    .await
                    .map(drop)
            }
            ControlConn::Grpc(conn) => {
                let request = RepositoryModelLoadRequest {
                    repository_name: String::new(),
                    model_name: model.into(),
                    parameters: HashMap::from([(
                        "config".into(),
                        ModelRepositoryParameter {
                            parameter_choice: Some(ParameterChoice::StringParam(
                                config.to_string(),
                            )),
                        },
                    )]),
                };
                let _: RepositoryModelLoadResponse =
                    unary(conn, "RepositoryModelLoad", &request).await?;
                Ok(())
            }
        }
    }
}
