//! Unary gRPC calls and the ones the tool needs besides inference: model
//! metadata and configuration, statistics.

use bytes::Bytes;
use hyper::{Response, StatusCode, body::Incoming};
use oxiserve_config::BatchPlan;
use oxiserve_proto::inference::{
    ModelConfigRequest, ModelConfigResponse, ModelMetadataRequest, ModelMetadataResponse,
    ModelStatisticsRequest, ModelStatisticsResponse, StatisticDuration,
    model_config::SchedulingChoice,
};

use super::{
    conn::GrpcConn,
    frame::{self, Decoder},
};
use crate::{
    error::{Error, Result},
    http::body::{OnceBody, next_frame},
    model::{ModelInfo, TensorInfo},
    server_stats::{Duration, ServerStats},
    target::Target,
};

/// Calls `method` with `request` and decodes its answer.
pub async fn unary<Req, Resp>(
    conn: &mut GrpcConn<OnceBody>,
    method: &str,
    request: &Req,
) -> Result<Resp>
where
    Req: prost::Message,
    Resp: prost::Message + Default,
{
    let call = GrpcConn::request(conn.uri(method), OnceBody::plain(frame::encode(request)));
    let mut response = conn.send(call).await.map_err(|e| e.context(method))?;
    let mut decoder = Decoder::default();
    let message = conn.drive(read_unary(&mut response, &mut decoder)).await?;
    let message = message.map_err(|e| Error::new(format!("{method}: {e}")))?;
    Resp::decode(message.unwrap_or_default())
        .map_err(|e| Error::new(format!("{method}: bad answer: {e}")))
}

/// Reads a unary answer to its end: its message (if any) once the status is OK.
pub async fn read_unary(
    response: &mut Response<Incoming>,
    decoder: &mut Decoder,
) -> Result<Option<Bytes>> {
    if response.status() != StatusCode::OK {
        return Err(Error::new(format!(
            "HTTP status {} (is this a gRPC port?)",
            response.status()
        )));
    }
    let mut status = frame::status(response.headers());
    while let Some(f) = next_frame(response.body_mut()).await {
        match f?.into_data() {
            Ok(data) => decoder.push(&data),
            Err(f) => {
                if let Ok(trailers) = f.into_trailers() {
                    status = frame::status(&trailers);
                }
            }
        }
    }
    match status {
        Some(Ok(())) => decoder.next_message().map_err(Error::new),
        Some(Err(e)) => Err(Error::new(e)),
        None => Err(Error::new("the answer has no gRPC status")),
    }
}

/// The model's inputs, outputs and batching, over gRPC.
pub async fn model_info(target: &Target, model: &str, version: Option<&str>) -> Result<ModelInfo> {
    let mut conn = GrpcConn::<OnceBody>::connect(target).await?;
    let (name, version) = (model.to_string(), version.unwrap_or_default().to_string());
    let request = ModelMetadataRequest {
        name: name.clone(),
        version: version.clone(),
    };
    let metadata: ModelMetadataResponse = unary(&mut conn, "ModelMetadata", &request).await?;
    let config: ModelConfigResponse = unary(
        &mut conn,
        "ModelConfig",
        &ModelConfigRequest { name, version },
    )
    .await?;
    let batch = config
        .config
        .as_ref()
        .map_or_else(BatchPlan::default, BatchPlan::of);
    let sequence = config.config.as_ref().is_some_and(|c| {
        matches!(
            c.scheduling_choice,
            Some(SchedulingChoice::SequenceBatching(_))
        )
    });
    let decoupled = config
        .config
        .and_then(|c| c.model_transaction_policy)
        .is_some_and(|p| p.decoupled);
    let tensors = |list: Vec<_>| -> Result<Vec<TensorInfo>> {
        list.into_iter()
            .map(
                |t: oxiserve_proto::inference::model_metadata_response::TensorMetadata| {
                    let datatype = oxiserve_types::DataType::from_wire_name(&t.datatype)
                        .ok_or_else(|| {
                            Error::new(format!(
                                "tensor '{}' has unknown datatype '{}'",
                                t.name, t.datatype
                            ))
                        })?;
                    let skip = usize::from(batch.is_batching()).min(t.shape.len());
                    Ok(TensorInfo {
                        name: t.name,
                        datatype,
                        dims: t.shape[skip..].to_vec(),
                    })
                },
            )
            .collect()
    };
    Ok(ModelInfo {
        inputs: tensors(metadata.inputs)?,
        outputs: tensors(metadata.outputs)?,
        batch,
        decoupled,
        sequence,
        name: metadata.name,
    })
}

/// A model's statistics over gRPC.
pub struct GrpcStats {
    conn: GrpcConn<OnceBody>,
    request: ModelStatisticsRequest,
}

impl GrpcStats {
    /// Statistics of `model` (one version, or all) from the server at `target`.
    pub async fn connect(target: &Target, model: &str, version: Option<&str>) -> Result<Self> {
        let request = ModelStatisticsRequest {
            name: model.into(),
            version: version.unwrap_or_default().into(),
        };
        Ok(GrpcStats {
            conn: GrpcConn::connect(target).await?,
            request,
        })
    }

    /// A snapshot of the cumulative counters.
    pub async fn fetch(&mut self) -> Result<ServerStats> {
        let answer: ModelStatisticsResponse =
            unary(&mut self.conn, "ModelStatistics", &self.request).await?;
        let d = |d: Option<StatisticDuration>| {
            d.map_or(Duration::default(), |d| Duration {
                count: d.count,
                ns: d.ns,
            })
        };
        let mut total = ServerStats::default();
        for m in answer
            .model_stats
            .into_iter()
            .filter(|m| m.name == self.request.name)
        {
            let s = m.inference_stats.unwrap_or_default();
            total = total.plus(&ServerStats {
                success: d(s.success),
                fail: d(s.fail),
                queue: d(s.queue),
                compute_input: d(s.compute_input),
                compute_infer: d(s.compute_infer),
                compute_output: d(s.compute_output),
                inference_count: m.inference_count,
                execution_count: m.execution_count,
            });
        }
        Ok(total)
    }
}
