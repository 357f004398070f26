//! One model folder: `config.pbtxt`, version folders, model files, label files.

use std::{
    fs,
    path::{Path, PathBuf},
};

use oxiserve_backend::{AutoCompleteContext, BackendQuery};
use oxiserve_config::{
    ConfigError, ModelConfig, ModelFolder, ParsedConfig, VersionContents, complete_config_with,
    parse_config, parse_version_folder,
    platform::{ENSEMBLE_PLATFORM, default_model_filename},
    select_versions,
    text_format::SourceMap,
};

use super::{model_id::ModelId, options::ScanOptions};

/// One model found (or asked for) and what reading it gave.
#[derive(Debug, Clone)]
pub struct ScannedModel {
    pub id: ModelId,
    /// Its folder, when one exists.
    pub path: Option<PathBuf>,
    pub outcome: Result<ModelSpec, Vec<ConfigError>>,
    /// Whether the folder gave a configuration at all.
    pub poll: FolderPoll,
}

/// What polling a model's folder gave, as Triton's repository manager tells
/// it: only a model whose folder was read enters the model table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderPoll {
    /// A configuration was formed (the model may still fail to load, or
    /// fail its ensemble checks).
    Read,
    /// No folder, or none that gives a valid configuration: the model stays
    /// out of the table (a loaded one keeps serving).
    Failed,
    /// The folder is in more than one repository: the model is taken out
    /// of service.
    NotUnique,
}

/// Why a model in two repositories is out of service, as Triton words it.
pub const NOT_UNIQUE_REASON: &str = "model appears in two or more repositories";

/// A model folder found in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    /// The model's name: the folder's name.
    pub name: String,
    /// The folder.
    pub path: PathBuf,
    /// The repository the folder is in.
    pub repository: PathBuf,
    /// The namespace of its model: the repository's with
    /// `--model-namespacing`, else empty.
    pub namespace: String,
}

impl ModelDir {
    /// The identity of the model in this folder.
    pub fn id(&self) -> ModelId {
        ModelId::new(&self.namespace, &self.name)
    }
}

/// One version of a model that its version policy selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSpec {
    pub version: i64,
    /// The version folder.
    pub path: PathBuf,
    /// The model file (or folder) the backend loads; None for ensembles.
    pub model_file: Option<PathBuf>,
}

/// A model whose configuration is complete and valid, with the versions to serve.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    pub dir: ModelDir,
    pub config: ModelConfig,
    /// Where each field of `config.pbtxt` was written, for later errors.
    pub source_map: SourceMap,
    /// Selected versions, ascending.
    pub versions: Vec<VersionSpec>,
}

const CONFIG_FILE: &str = "config.pbtxt";

/// Folders of a model that hold data, not versions (warmup inputs, initial
/// sequence state, alternative configs).
const SKIPPED_FOLDERS: &[&str] = &["warmup", "initial_state", "configs"];

/// Backends whose model file the core checks before loading; others (custom
/// backends) look for their own files.
const CHECKED_BACKENDS: &[&str] = &[
    "onnxruntime",
    "pytorch",
    "python",
    "tensorrt",
    "tensorflow",
    "openvino",
];

/// Reads and checks one model folder. With `options.auto_complete` a missing
/// `config.pbtxt` is allowed (Triton's `--strict-model-config=false`) and
/// the model's backend, if in `options.backends`, completes the configuration.
///
/// As in Triton, a folder that gives no valid configuration fails the poll;
/// a valid configuration whose backend, versions or files are wrong fails
/// at load.
pub fn read_model(dir: &ModelDir, options: &ScanOptions) -> ScannedModel {
    let (outcome, poll) = match read_folder(dir, options) {
        Ok(spec) => (Ok(spec), FolderPoll::Read),
        Err((errors, poll)) => (Err(errors), poll),
    };
    ScannedModel {
        id: dir.id(),
        path: Some(dir.path.clone()),
        outcome,
        poll,
    }
}

/// The errors of a folder, and whether they fail its poll or its load.
type ReadFailure = (Vec<ConfigError>, FolderPoll);

fn read_folder(dir: &ModelDir, options: &ScanOptions) -> Result<ModelSpec, ReadFailure> {
    let poll_failed = |errors: Vec<ConfigError>| (errors, FolderPoll::Failed);
    let load_failed = |errors: Vec<ConfigError>| (errors, FolderPoll::Read);
    let gpus = &options.gpus;
    let replaced = options
        .model_override
        .as_ref()
        .filter(|o| o.name == dir.name);
    let (config_path, parsed) = match replaced.and_then(|o| o.config.clone()) {
        Some(config) => (
            PathBuf::from("the load request's 'config' parameter"),
            ParsedConfig {
                config,
                source_map: SourceMap::default(),
            },
        ),
        None => {
            let path = config_path(&dir.path, options.config_name.as_deref());
            let parsed =
                read_config(&path, options.auto_complete).map_err(|e| poll_failed(vec![e]))?;
            (path, parsed)
        }
    };
    let available =
        version_folders(&dir.path).map_err(|e| poll_failed(vec![e.locate(&dir.path, None)]))?;
    let folder = ModelFolder {
        name: dir.name.clone(),
        first_version: match available.first() {
            Some(v) => Some(
                folder_contents(&dir.path.join(v.to_string())).map_err(|e| poll_failed(vec![e]))?,
            ),
            None => None,
        },
        gpus: gpus.to_vec(),
    };
    let locate = |errors: Vec<ConfigError>| -> Vec<ConfigError> {
        errors
            .into_iter()
            .map(|e| e.locate(&config_path, Some(&parsed.source_map)))
            .collect()
    };
    let backend_error = std::cell::RefCell::new(None);
    let backend_complete = |config: ModelConfig| -> Result<ModelConfig, ConfigError> {
        let Some(backends) = options.backends.as_ref().filter(|_| options.auto_complete) else {
            return Ok(config);
        };
        let context = AutoCompleteContext {
            name: dir.name.clone(),
            model_path: dir.path.clone(),
            version_path: available.last().map(|v| dir.path.join(v.to_string())),
        };
        let query = BackendQuery {
            backend: &config.backend,
            runtime: &config.runtime,
            model_name: &context.name,
            model_path: &context.model_path,
            version_path: context.version_path.as_deref(),
        };
        let backend = match backends.get(&query) {
            Ok(Some(backend)) => backend,
            Ok(None) => return Ok(config),
            // Each version's load reports the missing library, as Triton
            // does; it is the model's error only if the configuration
            // needed the backend to complete it.
            Err(e) => {
                backend_error.replace(Some(ConfigError::whole(e.message)));
                return Ok(config);
            }
        };
        backend.auto_complete(&context, config).map_err(|e| {
            // The backend's own words, not a place in config.pbtxt.
            let error = ConfigError::whole(e.message);
            backend_error.replace(Some(error.clone()));
            error
        })
    };
    let config = complete_config_with(parsed.config.clone(), &folder, backend_complete).map_err(
        |errors| match backend_error.take() {
            Some(error) => load_failed(vec![error]),
            None => poll_failed(locate(errors)),
        },
    )?;
    let (chosen, missing) = match replaced.and_then(|o| o.version) {
        Some(version) => (vec![version], Vec::new()),
        None => {
            let policy = config.version_policy.clone().unwrap_or_default();
            select_versions(&policy, &available).map_err(|e| load_failed(locate(vec![e])))?
        }
    };
    if let Some(version) = chosen.iter().find(|v| !available.contains(v)) {
        return Err(load_failed(vec![ConfigError::whole(format!(
            "version {version} of model '{}' is not in the model folder {} (versions there: {})",
            dir.name,
            dir.path.display(),
            available
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))]));
    }
    for version in missing {
        log::error!(
            "version {version} is specified for model '{}', but the version directory is not present",
            dir.name
        );
    }
    let mut errors = check_label_files(dir, &config);
    let mut versions = Vec::new();
    for version in chosen {
        let path = dir.path.join(version.to_string());
        let model_file =
            (config.platform != ENSEMBLE_PLATFORM).then(|| path.join(model_filename(&config)));
        if let Some(file) = &model_file
            && CHECKED_BACKENDS.contains(&config.backend.as_str())
            && !file.exists()
        {
            errors.push(ConfigError::field(
                "default_model_filename",
                format!(
                    "version {version} has no model file: {} does not exist (set \
                     'default_model_filename' if the file has another name)",
                    file.display()
                ),
            ));
        }
        versions.push(VersionSpec {
            version,
            path,
            model_file,
        });
    }
    if !errors.is_empty() {
        return Err(load_failed(locate(errors)));
    }
    Ok(ModelSpec {
        dir: dir.clone(),
        config,
        source_map: parsed.source_map,
        versions,
    })
}

/// The file a version folder must hold: `default_model_filename`, or the
/// platform's default where Triton leaves that to the backend.
fn model_filename(config: &ModelConfig) -> &str {
    if config.default_model_filename.is_empty() {
        default_model_filename(&config.platform, &config.backend).unwrap_or_default()
    } else {
        &config.default_model_filename
    }
}

/// The configuration file of the model in `model_path`, as Triton picks it:
/// `configs/<name>.pbtxt` with `--model-config-name=<name>` where that file
/// exists, else `config.pbtxt`.
fn config_path(model_path: &Path, config_name: Option<&str>) -> PathBuf {
    config_name
        .map(|name| model_path.join("configs").join(format!("{name}.pbtxt")))
        .filter(|custom| custom.is_file())
        .unwrap_or_else(|| model_path.join(CONFIG_FILE))
}

fn read_config(path: &Path, auto_complete: bool) -> Result<ParsedConfig, ConfigError> {
    match fs::read_to_string(path) {
        Ok(text) => parse_config(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && auto_complete => Ok(ParsedConfig::default()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::whole(
            "config.pbtxt is missing; write one, or start with --strict-model-config=false to let the \
             server complete the configuration from the model",
        )
        .locate(path, None)),
        Err(e) => Err(ConfigError::whole(format!("cannot read: {e}")).locate(path, None)),
    }
}

/// Why `name` is not a version folder, in Triton's words.
fn not_a_version(name: &str) -> &'static str {
    let digits = !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit());
    match digits && name.starts_with('0') {
        true => "contains leading zeros in its directory name",
        false => "fails to convert to integral number",
    }
}

/// Version numbers of the version folders, ascending; other entries are ignored.
fn version_folders(model_path: &Path) -> Result<Vec<i64>, ConfigError> {
    let entries = fs::read_dir(model_path)
        .map_err(|e| ConfigError::whole(format!("cannot read model folder: {e}")))?;
    let mut versions: Vec<i64> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = parse_version_folder(&name);
            if version.is_none() && !SKIPPED_FOLDERS.contains(&name.as_str()) {
                log::warn!(
                    "ignore version directory '{name}' which {}",
                    not_a_version(&name)
                );
            }
            version
        })
        .collect();
    versions.sort_unstable();
    Ok(versions)
}

fn folder_contents(path: &Path) -> Result<VersionContents, ConfigError> {
    let entries = fs::read_dir(path).map_err(|e| {
        ConfigError::whole(format!("cannot read version folder: {e}")).locate(path, None)
    })?;
    Ok(entries
        .filter_map(Result::ok)
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path().is_dir(),
            )
        })
        .collect())
}

fn check_label_files(dir: &ModelDir, config: &ModelConfig) -> Vec<ConfigError> {
    config
        .output
        .iter()
        .enumerate()
        .filter(|(_, o)| {
            !o.label_filename.is_empty() && !dir.path.join(&o.label_filename).is_file()
        })
        .map(|(i, o)| {
            ConfigError::field(
                format!("output[{i}].label_filename"),
                format!(
                    "label file '{}' is not in the model folder {}",
                    o.label_filename,
                    dir.path.display()
                ),
            )
        })
        .collect()
}
