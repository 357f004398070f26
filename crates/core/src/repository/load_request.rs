//! The parameters of a load request (the model repository extension):
//! a configuration given as JSON instead of `config.pbtxt`, model files
//! uploaded in the request, and (beyond Triton) one version to serve.

use std::{
    fs,
    path::{Component, Path, PathBuf},
    sync::Arc,
};

use bytes::Bytes;
use oxiserve_config::ModelConfig;
use oxiserve_types::{Error, Result};
use tempfile::TempDir;

/// The `file:` prefix of an uploaded file's parameter name.
pub const FILE_PREFIX: &str = "file:";

/// How to load a model on request.
#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    /// `config`: the configuration as JSON, used instead of `config.pbtxt`.
    pub config: Option<String>,
    /// `file:<path>` parameters: the files of a model folder made for this
    /// load (paths relative to it, e.g. `1/model.onnx`); needs `config`.
    pub files: Vec<(String, Bytes)>,
    /// Serve only this version, whatever the version policy says.
    pub version: Option<i64>,
}

impl LoadRequest {
    /// Whether the request replaces anything of the repository's model.
    pub fn overrides(&self) -> bool {
        self.config.is_some() || !self.files.is_empty() || self.version.is_some()
    }

    /// The configuration override, parsed.
    pub(crate) fn parsed_config(&self) -> Result<Option<ModelConfig>> {
        self.config
            .as_deref()
            .map(|json| {
                oxiserve_config::from_json(json)
                    .map_err(|e| Error::invalid_arg(format!("Invalid config override: {e}")))
            })
            .transpose()
    }
}

/// A model folder written from a load request's files, deleted when the
/// last model loaded from it is gone.
#[derive(Debug)]
pub(crate) struct OverrideFolder {
    _root: TempDir,
    /// `<temporary folder>/<model name>`.
    pub path: PathBuf,
}

impl OverrideFolder {
    /// Writes `files` into a new folder named `model` under a temporary one.
    pub fn write(model: &str, files: &[(String, Bytes)]) -> Result<Arc<Self>> {
        check_model_name(model)?;
        let root = tempfile::Builder::new()
            .prefix("oxiserve-model-")
            .tempdir()
            .map_err(|e| Error::internal(format!("cannot create a model folder: {e}")))?;
        let path = root.path().join(model);
        fs::create_dir(&path)
            .map_err(|e| Error::internal(format!("cannot create a model folder: {e}")))?;
        for (name, contents) in files {
            let target = path.join(relative_path(name)?);
            if let Some(parent) = target.parent() {
                if parent.is_file() {
                    return Err(Error::invalid_arg(format!(
                        "Invalid file parameter '{FILE_PREFIX}{name}', directory has been created as a file"
                    )));
                }
                fs::create_dir_all(parent).map_err(|e| {
                    Error::invalid_arg(format!("Invalid file parameter '{FILE_PREFIX}{name}': {e}"))
                })?;
            }
            fs::write(&target, contents).map_err(|e| {
                Error::invalid_arg(format!("Invalid file parameter '{FILE_PREFIX}{name}': {e}"))
            })?;
        }
        Ok(Arc::new(Self { _root: root, path }))
    }
}

/// Checks that `name` can be a model folder's name: one path component,
/// so that a load request can never name a folder outside the repository
/// or the temporary folder its files are written to.
pub(crate) fn check_model_name(name: &str) -> Result<()> {
    let why = if name.is_empty() {
        "it is empty"
    } else if name.contains(['/', '\\']) {
        "it contains a path separator"
    } else if name == "." || name == ".." {
        "it names a relative folder"
    } else if name.contains('\0') {
        "it contains a NUL character"
    } else {
        return Ok(());
    };
    Err(Error::invalid_arg(format!(
        "Invalid model name '{}': {why}; a model name is the name of one folder of the model \
         repository",
        name.escape_debug()
    )))
}

/// `name` as a path inside the model folder: relative, with no `..`.
fn relative_path(name: &str) -> Result<&Path> {
    let path = Path::new(name);
    let inside = !name.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside {
        Ok(path)
    } else {
        Err(Error::invalid_arg(format!(
            "Invalid file parameter '{FILE_PREFIX}{name}': the path must stay within the model directory"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_files_under_the_model_folder() {
        let files = vec![
            ("1/model.py".to_string(), Bytes::from_static(b"code")),
            ("labels.txt".to_string(), Bytes::from_static(b"a\nb")),
        ];
        let folder = OverrideFolder::write("m", &files).unwrap();
        assert!(folder.path.ends_with("m"));
        assert_eq!(fs::read(folder.path.join("1/model.py")).unwrap(), b"code");
        assert_eq!(fs::read(folder.path.join("labels.txt")).unwrap(), b"a\nb");
        let root = folder.path.parent().unwrap().to_path_buf();
        drop(folder);
        assert!(!root.exists(), "deleted with its last user");
    }

    #[test]
    fn refuses_paths_outside_the_folder() {
        for name in ["../escape", "/etc/passwd", "1/../../x", ""] {
            let files = vec![(name.to_string(), Bytes::new())];
            let e = OverrideFolder::write("m", &files).unwrap_err();
            assert!(
                e.message.contains("must stay within"),
                "{name}: {}",
                e.message
            );
        }
    }

    #[test]
    fn refuses_model_names_that_are_paths() {
        for name in [
            "../../tmp/x",
            "/tmp/x",
            "a/b",
            "..",
            ".",
            "",
            "a\\b",
            "a\0b",
        ] {
            let files = vec![("1/model.py".to_string(), Bytes::from_static(b"x"))];
            let e = OverrideFolder::write(name, &files).unwrap_err();
            assert!(
                e.message.starts_with("Invalid model name"),
                "{name}: {}",
                e.message
            );
        }
        for name in ["m", "my.model", "model-1_v2", "..m"] {
            assert!(check_model_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_bad_config_names_the_parameter() {
        let request = LoadRequest {
            config: Some("{not json".into()),
            ..Default::default()
        };
        let e = request.parsed_config().unwrap_err();
        assert!(
            e.message.starts_with("Invalid config override: "),
            "{}",
            e.message
        );
    }
}
