//! A model's TensorFlow settings: the `parameters` Triton's tensorflow
//! backend reads from `config.pbtxt`, and the session `ConfigProto` they
//! and the backend's settings make.

use std::path::{Path, PathBuf};

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};
use prost::Message;

use crate::{meta_graph::ConfigProto, settings::parse_bool};

/// The graph tag a SavedModel is loaded with unless `TF_GRAPH_TAG` says.
const DEFAULT_TAG: &str = "serve";

/// What every session of one model is opened with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelParameters {
    /// `TF_GRAPH_TAG`: the SavedModel graph to load.
    pub graph_tag: String,
    /// `TF_SIGNATURE_DEF`: the signature to serve; `None` picks
    /// `serving_default`, or else the first that is not an init or train op.
    pub signature_def: Option<String>,
    /// `MAX_SESSION_SHARE_COUNT`: instances that share one session (1).
    pub max_session_share_count: usize,
    /// `TF_INIT_OPS_FILE`: the file naming operations run once per session.
    pub init_ops_file: Option<String>,
    /// The serialized `ConfigProto` (`TF_NUM_INTRA_THREADS`,
    /// `TF_NUM_INTER_THREADS`, `TF_USE_PER_SESSION_THREADS`).
    pub session_config: Vec<u8>,
}

impl ModelParameters {
    /// Reads `config`'s parameters; a bad value names the parameter and model.
    pub(crate) fn of(config: &ModelConfig, allow_soft_placement: bool) -> Result<Self> {
        let model = &config.name;
        let text = |key: &str| {
            config
                .parameters
                .get(key)
                .map(|p| p.string_value.trim())
                .filter(|v| !v.is_empty())
        };
        let number = |key: &str| -> Result<Option<i64>> {
            text(key)
                .map(|v| {
                    v.parse::<i64>().map_err(|_| {
                        Error::invalid_arg(format!(
                            "parameter '{key}' of TensorFlow model '{model}': '{v}' is not a number"
                        ))
                    })
                })
                .transpose()
        };
        let share = number("MAX_SESSION_SHARE_COUNT")?.unwrap_or(1);
        if share <= 0 {
            return Err(Error::invalid_arg(format!(
                "parameter 'MAX_SESSION_SHARE_COUNT' must be positive number for TensorFlow \
                 model '{model}'"
            )));
        }
        let intra = number("TF_NUM_INTRA_THREADS")?.unwrap_or(0);
        if intra < 0 {
            return Err(Error::invalid_arg(format!(
                "parameter 'TF_NUM_INTRA_THREADS' must be non-negative number for TensorFlow \
                 model '{model}'"
            )));
        }
        let inter = number("TF_NUM_INTER_THREADS")?.unwrap_or(0);
        let per_session = text("TF_USE_PER_SESSION_THREADS")
            .map(|v| {
                parse_bool(v).ok_or_else(|| {
                    Error::invalid_arg(format!(
                        "parameter 'TF_USE_PER_SESSION_THREADS' of TensorFlow model '{model}': \
                         '{v}' is not a boolean"
                    ))
                })
            })
            .transpose()?
            .unwrap_or(false);
        let session_config = ConfigProto {
            intra_op_parallelism_threads: i32::try_from(intra).unwrap_or(i32::MAX),
            inter_op_parallelism_threads: i32::try_from(inter).unwrap_or(i32::MAX),
            allow_soft_placement,
            use_per_session_threads: per_session,
        }
        .encode_to_vec();
        Ok(Self {
            graph_tag: text("TF_GRAPH_TAG").unwrap_or(DEFAULT_TAG).to_string(),
            signature_def: text("TF_SIGNATURE_DEF").map(str::to_string),
            max_session_share_count: usize::try_from(share).unwrap_or(usize::MAX),
            init_ops_file: text("TF_INIT_OPS_FILE").map(str::to_string),
            session_config,
        })
    }

    /// The operations `TF_INIT_OPS_FILE` names: `{"init_ops": [...]}` in the
    /// version folder, or else in the model folder.
    pub(crate) fn init_ops(&self, version_path: &Path, model_path: &Path) -> Result<Vec<String>> {
        let Some(file) = &self.init_ops_file else {
            return Ok(Vec::new());
        };
        let path: PathBuf = [version_path, model_path]
            .iter()
            .map(|dir| dir.join(file))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                Error::invalid_arg(format!(
                    "TF_INIT_OPS_FILE '{file}' is in neither {} nor {}",
                    version_path.display(),
                    model_path.display()
                ))
            })?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::invalid_arg(format!("{}: {e}", path.display())))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::invalid_arg(format!("{}: {e}", path.display())))?;
        json.get("init_ops")
            .and_then(|ops| ops.as_array())
            .and_then(|ops| {
                ops.iter()
                    .map(|op| op.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                Error::invalid_arg(format!(
                    "{}: expected {{\"init_ops\": [\"<operation>\", ...]}}",
                    path.display()
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::testing::config_with_parameters;

    use super::*;

    fn config(pairs: &[(&str, &str)]) -> ModelConfig {
        config_with_parameters("m", pairs)
    }

    #[test]
    fn reads_triton_parameters() {
        let p = ModelParameters::of(
            &config(&[
                ("TF_NUM_INTRA_THREADS", "2"),
                ("TF_USE_PER_SESSION_THREADS", "On"),
                ("TF_GRAPH_TAG", "serve2"),
                ("TF_SIGNATURE_DEF", "double"),
                ("MAX_SESSION_SHARE_COUNT", "3"),
            ]),
            true,
        )
        .unwrap();
        assert_eq!(p.graph_tag, "serve2");
        assert_eq!(p.signature_def.as_deref(), Some("double"));
        assert_eq!(p.max_session_share_count, 3);
        let proto = ConfigProto::decode(&p.session_config[..]).unwrap();
        assert_eq!(proto.intra_op_parallelism_threads, 2);
        assert!(proto.use_per_session_threads && proto.allow_soft_placement);
        let defaults = ModelParameters::of(&config(&[]), false).unwrap();
        assert_eq!(
            (
                defaults.graph_tag.as_str(),
                defaults.max_session_share_count
            ),
            ("serve", 1)
        );
    }

    #[test]
    fn bad_values_name_the_parameter_and_model() {
        for (pair, needle) in [
            (
                ("MAX_SESSION_SHARE_COUNT", "0"),
                "parameter 'MAX_SESSION_SHARE_COUNT' must be positive number for TensorFlow model 'm'",
            ),
            (
                ("TF_NUM_INTRA_THREADS", "-1"),
                "parameter 'TF_NUM_INTRA_THREADS' must be non-negative",
            ),
            (("TF_NUM_INTER_THREADS", "x"), "'x' is not a number"),
        ] {
            let error = ModelParameters::of(&config(&[pair]), true).unwrap_err();
            assert!(error.message.contains(needle), "{}", error.message);
        }
    }

    #[test]
    fn init_ops_come_from_the_version_folder_first() {
        let model = tempfile::tempdir().unwrap();
        let version = model.path().join("1");
        std::fs::create_dir_all(&version).unwrap();
        std::fs::write(model.path().join("ops.json"), r#"{"init_ops": ["a"]}"#).unwrap();
        let p = ModelParameters::of(&config(&[("TF_INIT_OPS_FILE", "ops.json")]), true).unwrap();
        assert_eq!(p.init_ops(&version, model.path()).unwrap(), ["a"]);
        std::fs::write(version.join("ops.json"), r#"{"init_ops": ["b", "c"]}"#).unwrap();
        assert_eq!(p.init_ops(&version, model.path()).unwrap(), ["b", "c"]);
        std::fs::write(version.join("ops.json"), r#"{"ops": []}"#).unwrap();
        assert!(p.init_ops(&version, model.path()).is_err());
    }
}
