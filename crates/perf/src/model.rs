//! What the tool needs to know about a model: its inputs, outputs and
//! maximum batch size, from the metadata and configuration endpoints.

use oxiserve_config::BatchPlan;
use oxiserve_types::DataType;
use serde_json::Value;

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
    /// From the JSON answers of `GET /v2/models/M` and `GET /v2/models/M/config`.
    pub fn from_json(metadata: &Value, config: &Value) -> Result<ModelInfo> {
        let name = metadata["name"].as_str().unwrap_or_default().to_string();
        let batch = BatchPlan::with_max_batch_size(
            i32::try_from(config["max_batch_size"].as_u64().unwrap_or(0)).unwrap_or(i32::MAX),
        );
        let tensors = |key: &str| -> Result<Vec<TensorInfo>> {
            let list = metadata[key]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            list.iter()
                .map(|t| tensor_info(t, batch.is_batching()))
                .collect::<Result<Vec<_>>>()
                .map_err(|e| e.context(format!("model '{name}' metadata, {key}")))
        };
        Ok(ModelInfo {
            inputs: tensors("inputs")?,
            outputs: tensors("outputs")?,
            batch,
            decoupled: config["model_transaction_policy"]["decoupled"]
                .as_bool()
                .unwrap_or(false),
            sequence: config
                .get("sequence_batching")
                .is_some_and(|s| !s.is_null()),
            name,
        })
    }
}

/// A metadata tensor (`{"name", "datatype", "shape"}`), without the batch dim.
fn tensor_info(tensor: &Value, batched: bool) -> Result<TensorInfo> {
    let name = tensor["name"]
        .as_str()
        .ok_or_else(|| Error::new("a tensor without a name"))?;
    let datatype = tensor["datatype"].as_str().unwrap_or_default();
    let datatype = DataType::from_wire_name(datatype)
        .ok_or_else(|| Error::new(format!("tensor '{name}' has unknown datatype '{datatype}'")))?;
    let mut dims = tensor["shape"]
        .as_array()
        .ok_or_else(|| Error::new(format!("tensor '{name}' has no shape")))?
        .iter()
        .map(|d| {
            d.as_i64()
                .ok_or_else(|| Error::new(format!("tensor '{name}' has a bad shape")))
        })
        .collect::<Result<Vec<_>>>()?;
    if batched && !dims.is_empty() {
        dims.remove(0);
    }
    Ok(TensorInfo {
        name: name.to_string(),
        datatype,
        dims,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn batch_dim_is_dropped_when_the_model_batches() {
        let metadata = json!({"name": "m", "inputs": [{"name": "IN", "datatype": "FP32", "shape": [-1, 16]}],
            "outputs": [{"name": "OUT", "datatype": "BYTES", "shape": [-1, -1]}]});
        let info = ModelInfo::from_json(&metadata, &json!({"max_batch_size": 8})).unwrap();
        assert_eq!(info.batch.max_batch(), 8);
        assert_eq!(info.inputs[0].dims, [16]);
        assert_eq!(info.outputs[0].datatype, DataType::Bytes);
        let info = ModelInfo::from_json(&metadata, &json!({})).unwrap();
        assert_eq!(info.inputs[0].dims, [-1, 16]);
    }

    #[test]
    fn unknown_datatype_names_the_tensor() {
        let metadata =
            json!({"name": "m", "inputs": [{"name": "IN", "datatype": "FP33", "shape": [1]}]});
        let err = ModelInfo::from_json(&metadata, &json!({}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'IN'") && err.contains("FP33"), "{err}");
    }
}
