//! From the text of `config.pbtxt` to a complete, validated `ModelConfig`.

use std::path::Path;

use oxiserve_proto::{ModelConfig, model_config_descriptor};

use crate::{
    autocomplete::{VersionContents, complete_backend_fields},
    error::ConfigError,
    normalize::normalize,
    text_format::{self, SourceMap},
    validate::validate,
};

/// A configuration as written, with where each field was written.
#[derive(Debug, Clone, Default)]
pub struct ParsedConfig {
    pub config: ModelConfig,
    pub source_map: SourceMap,
}

/// Parses `config.pbtxt` text; `file` names the file in errors.
pub fn parse_config(text: &str, file: &Path) -> Result<ParsedConfig, ConfigError> {
    let (message, source_map) =
        text_format::parse(&model_config_descriptor(), text).map_err(|e| ConfigError {
            file: Some(file.to_path_buf()),
            position: Some(e.position),
            field: String::new(),
            message: e.message,
        })?;
    let config = message.transcode_to::<ModelConfig>().map_err(|e| {
        ConfigError::whole(format!("internal error converting the configuration: {e}"))
            .locate(file, None)
    })?;
    Ok(ParsedConfig { config, source_map })
}

/// What the model folder tells about a model besides its config.
#[derive(Debug, Clone, Default)]
pub struct ModelFolder {
    /// The folder's name, which is the model's name.
    pub name: String,
    /// The entries of the first version folder, if there is one.
    pub first_version: Option<VersionContents>,
    /// GPU ids this server can use (empty on CPU-only machines).
    pub gpus: Vec<i32>,
}

/// Completes, normalizes and validates a parsed configuration. Errors carry
/// field paths; locate them with [`ConfigError::locate`].
pub fn complete_config(
    config: ModelConfig,
    folder: &ModelFolder,
) -> Result<ModelConfig, Vec<ConfigError>> {
    complete_config_with(config, folder, Ok)
}

/// Like [`complete_config`], letting `backend_complete` (the model's backend's
/// auto-complete) change the configuration once its backend fields are
/// known, before it is normalized and validated.
pub fn complete_config_with(
    mut config: ModelConfig,
    folder: &ModelFolder,
    backend_complete: impl FnOnce(ModelConfig) -> Result<ModelConfig, ConfigError>,
) -> Result<ModelConfig, Vec<ConfigError>> {
    if !config.name.is_empty() && config.name != folder.name {
        return Err(vec![ConfigError::field(
            "name",
            format!(
                "name \"{}\" differs from the model's folder name '{}'; they must be equal (or leave 'name' out)",
                config.name, folder.name
            ),
        )]);
    }
    complete_backend_fields(&mut config, &folder.name, folder.first_version.as_ref())
        .map_err(|e| vec![e])?;
    let mut config = backend_complete(config).map_err(|e| vec![e])?;
    normalize(&mut config, &folder.gpus);
    let errors = validate(&config, &folder.gpus);
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(errors)
    }
}
