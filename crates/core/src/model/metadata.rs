//! Model metadata (KServe v2 `ModelMetadataResponse`) from a configuration.

use oxiserve_config::BatchPlan;
use oxiserve_proto::ModelConfig;
use oxiserve_types::DataType;

/// A tensor's name, datatype and shape (batch dimension included as -1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMetadata {
    pub name: String,
    pub datatype: String,
    pub shape: Vec<i64>,
}

/// What clients learn about a model before they call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelMetadata {
    pub name: String,
    pub versions: Vec<String>,
    pub platform: String,
    pub inputs: Vec<TensorMetadata>,
    pub outputs: Vec<TensorMetadata>,
}

impl ModelMetadata {
    /// The metadata of `config` served as `versions`.
    pub fn new(config: &ModelConfig, versions: Vec<String>) -> Self {
        let batch = BatchPlan::of(config);
        let tensor = |name: &str, data_type: i32, dims: &[i64]| TensorMetadata {
            name: name.to_string(),
            datatype: DataType::from_config_number(data_type)
                .map_or("INVALID", DataType::wire_name)
                .to_string(),
            shape: batch.full_shape(dims),
        };
        let platform = if config.platform.is_empty() {
            config.backend.clone()
        } else {
            config.platform.clone()
        };
        Self {
            name: config.name.clone(),
            versions,
            platform,
            inputs: config
                .input
                .iter()
                .map(|i| tensor(&i.name, i.data_type, &i.dims))
                .collect(),
            outputs: config
                .output
                .iter()
                .map(|o| tensor(&o.name, o.data_type, &o.dims))
                .collect(),
        }
    }
}
