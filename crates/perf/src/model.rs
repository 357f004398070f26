//! What the tool needs to know about a model: its inputs, outputs and
//! maximum batch size, from the metadata and configuration endpoints.

use oxiserve_client::{
    Client,
    proto::{
        ModelConfig, ModelMetadataResponse, model_config::SchedulingChoice,
        model_metadata_response::TensorMetadata,
    },
};
use oxiserve_config::BatchPlan;
use oxiserve_types::DataType;

use crate::error::{Error, Result};

/// One input or output of the model; `dims` exclude the batch dim.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    pub datatype: DataType,
    pub dims: Vec<i64>,
}

/// A model as the load generator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub name: String,
    /// How the model batches (its `max_batch_size`).
    pub batch: BatchPlan,
    /// `model_transaction_policy { decoupled: true }`: any number of
    /// responses per request, over a gRPC stream only.
    pub decoupled: bool,
    /// `sequence_batching`: requests belong to sequences.
    pub sequence: bool,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
}

impl ModelInfo {
    /// Asks the server for `model`'s metadata and configuration.
    pub async fn fetch(client: &Client, model: &str, version: Option<&str>) -> Result<ModelInfo> {
        let version = version.unwrap_or_default();
        let metadata = client.model_metadata(model, version).await?;
        let config = client.model_config(model, version).await?;
        ModelInfo::new(metadata, &config)
    }

    /// From the answers of the model metadata and configuration calls.
    pub fn new(metadata: ModelMetadataResponse, config: &ModelConfig) -> Result<ModelInfo> {
        let batch = BatchPlan::of(config);
        let name = metadata.name;
        let tensors = |list: Vec<TensorMetadata>, key: &str| -> Result<Vec<TensorInfo>> {
            list.into_iter()
                .map(|t| tensor_info(t, batch.is_batching()))
                .collect::<Result<Vec<_>>>()
                .map_err(|e| e.context(format!("model '{name}' metadata, {key}")))
        };
        Ok(ModelInfo {
            inputs: tensors(metadata.inputs, "inputs")?,
            outputs: tensors(metadata.outputs, "outputs")?,
            batch,
            decoupled: config.model_transaction_policy.is_some_and(|p| p.decoupled),
            sequence: matches!(
                config.scheduling_choice,
                Some(SchedulingChoice::SequenceBatching(_))
            ),
            name,
        })
    }
}

/// A metadata tensor, without the batch dim.
fn tensor_info(tensor: TensorMetadata, batched: bool) -> Result<TensorInfo> {
    let datatype = DataType::from_wire_name(&tensor.datatype).ok_or_else(|| {
        Error::new(format!(
            "tensor '{}' has unknown datatype '{}'",
            tensor.name, tensor.datatype
        ))
    })?;
    let skip = usize::from(batched).min(tensor.shape.len());
    Ok(TensorInfo {
        name: tensor.name,
        datatype,
        dims: tensor.shape[skip..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, datatype: &str, shape: Vec<i64>) -> TensorMetadata {
        TensorMetadata {
            name: name.into(),
            datatype: datatype.into(),
            shape,
        }
    }

    fn metadata(inputs: Vec<TensorMetadata>) -> ModelMetadataResponse {
        ModelMetadataResponse {
            name: "m".into(),
            inputs,
            outputs: vec![tensor("OUT", "BYTES", vec![-1, -1])],
            ..ModelMetadataResponse::default()
        }
    }

    #[test]
    fn batch_dim_is_dropped_when_the_model_batches() {
        let metadata = metadata(vec![tensor("IN", "FP32", vec![-1, 16])]);
        let batching = ModelConfig {
            max_batch_size: 8,
            ..ModelConfig::default()
        };
        let info = ModelInfo::new(metadata.clone(), &batching).unwrap();
        assert_eq!(info.batch.max_batch(), 8);
        assert_eq!(info.inputs[0].dims, [16]);
        assert_eq!(info.outputs[0].datatype, DataType::Bytes);
        let info = ModelInfo::new(metadata, &ModelConfig::default()).unwrap();
        assert_eq!(info.inputs[0].dims, [-1, 16]);
    }

    #[test]
    fn unknown_datatype_names_the_tensor() {
        let metadata = metadata(vec![tensor("IN", "FP33", vec![1])]);
        let err = ModelInfo::new(metadata, &ModelConfig::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("'IN'") && err.contains("FP33"), "{err}");
    }
}
