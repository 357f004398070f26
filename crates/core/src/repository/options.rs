//! What a scan of the repositories reads, and what a load request replaces.

use std::path::PathBuf;

use crate::backends::BackendRegistry;

/// How to read the repositories.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Allow a missing `config.pbtxt` (auto-completion on).
    pub auto_complete: bool,
    /// GPU ids this server can use.
    pub gpus: Vec<i32>,
    /// `--model-config-name`: read `configs/<name>.pbtxt` where it exists.
    pub config_name: Option<String>,
    /// Read only these models (explicit model control); None reads all.
    pub only: Option<Vec<String>>,
    /// Backends whose auto-complete completes their models' configurations
    /// (with `auto_complete` on).
    pub backends: Option<BackendRegistry>,
    /// What a load request replaces for one model.
    pub model_override: Option<ModelOverride>,
    /// `--model-namespacing`: each repository is a namespace, and a model
    /// may be in several of them.
    pub namespacing: bool,
}

/// A load request's replacements for one model (see `LoadRequest`).
#[derive(Debug, Clone, Default)]
pub struct ModelOverride {
    pub name: String,
    /// A folder to read the model from instead of the repositories'.
    pub folder: Option<PathBuf>,
    /// A configuration to use instead of `config.pbtxt`.
    pub config: Option<oxiserve_config::ModelConfig>,
    /// The one version to serve.
    pub version: Option<i64>,
}
