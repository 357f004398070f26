//! Triton's back-end field completion: fills `name`, `platform`, `backend` and
//! `default_model_filename` from what the model folder holds. This runs for
//! every model, whatever `--strict-model-config` says.

use std::collections::BTreeMap;

use oxiserve_proto::ModelConfig;

use crate::error::ConfigError;

/// The entries of a model's first version folder: name -> is a folder.
pub type VersionContents = BTreeMap<String, bool>;

const SAVEDMODEL: &str = "model.savedmodel";
const GRAPHDEF: &str = "model.graphdef";
const PLAN: &str = "model.plan";
const ONNX: &str = "model.onnx";
const OPENVINO: &str = "model.xml";
const TORCHSCRIPT: &str = "model.pt";
const AOTI: &str = "model.pt2";
const PYTHON: &str = "model.py";

/// Completes `config` for the model `model_name`; `version` lists its first
/// version folder (None when the model has no version folder).
pub fn complete_backend_fields(
    config: &mut ModelConfig,
    model_name: &str,
    version: Option<&VersionContents>,
) -> Result<(), ConfigError> {
    if config.name.is_empty() {
        config.name = model_name.to_string();
    }
    // A file (not folder) or folder named `file` in the version folder, while
    // nothing in the config decides already.
    let undecided = config.platform.is_empty() && config.default_model_filename.is_empty();
    let has = |file: &str, want_dir: bool| {
        undecided && version.is_some_and(|v| v.get(file) == Some(&want_dir))
    };

    if config.platform.is_empty() && (config.backend.is_empty() || config.backend == "tensorflow") {
        match config.default_model_filename.as_str() {
            SAVEDMODEL => config.platform = "tensorflow_savedmodel".into(),
            GRAPHDEF => config.platform = "tensorflow_graphdef".into(),
            "" if has(SAVEDMODEL, true) => config.platform = "tensorflow_savedmodel".into(),
            "" if has(GRAPHDEF, false) => config.platform = "tensorflow_graphdef".into(),
            _ => {}
        }
    }
    if matches!(
        config.platform.as_str(),
        "tensorflow_savedmodel" | "tensorflow_graphdef"
    ) {
        set_if_empty(&mut config.backend, "tensorflow");
        let file = if config.platform == "tensorflow_savedmodel" {
            SAVEDMODEL
        } else {
            GRAPHDEF
        };
        set_if_empty(&mut config.default_model_filename, file);
        return Ok(());
    }

    if config.backend.is_empty()
        && (config.platform == "tensorrt_plan"
            || config.default_model_filename == PLAN
            || has(PLAN, false))
    {
        config.backend = "tensorrt".into();
    }
    if config.backend == "tensorrt" {
        set_if_empty(&mut config.platform, "tensorrt_plan");
        set_if_empty(&mut config.default_model_filename, PLAN);
        return Ok(());
    }

    if config.backend.is_empty()
        && (config.platform == "onnxruntime_onnx"
            || config.default_model_filename == ONNX
            || undecided && version.is_some_and(|v| v.contains_key(ONNX)))
    {
        config.backend = "onnxruntime".into();
    }
    if config.backend == "onnxruntime" {
        set_if_empty(&mut config.platform, "onnxruntime_onnx");
        set_if_empty(&mut config.default_model_filename, ONNX);
        return Ok(());
    }

    if config.backend.is_empty()
        && (config.default_model_filename == OPENVINO
            || undecided && version.is_some_and(|v| v.contains_key(OPENVINO)))
    {
        config.backend = "openvino".into();
    }
    if config.backend == "openvino" {
        set_if_empty(&mut config.default_model_filename, OPENVINO);
        return Ok(());
    }

    if config.backend.is_empty() {
        if matches!(
            config.platform.as_str(),
            "pytorch_libtorch" | "pytorch_torchscript"
        ) || config.default_model_filename == TORCHSCRIPT
        {
            config.backend = "pytorch".into();
        } else if config.platform == "torch_aoti" || config.default_model_filename == AOTI {
            config.backend = "pytorch_aoti".into();
        } else if has(TORCHSCRIPT, false) {
            config.backend = "pytorch".into();
            config.platform = "pytorch_libtorch".into();
        } else if has(AOTI, false) {
            config.backend = "pytorch_aoti".into();
            config.platform = "torch_aoti".into();
        }
    }
    if config.backend == "pytorch" {
        if config.platform.is_empty() {
            config.platform = "pytorch_libtorch".into();
            set_if_empty(&mut config.default_model_filename, TORCHSCRIPT);
        }
        return Ok(());
    }

    if config.backend.is_empty()
        && (config.default_model_filename == PYTHON
            || undecided && version.is_some_and(|v| v.contains_key(PYTHON)))
    {
        config.backend = "python".into();
    }
    if config.backend == "python" {
        set_if_empty(&mut config.default_model_filename, PYTHON);
        return Ok(());
    }

    if config.backend.is_empty() && undecided {
        // A custom backend named by the model's name: `model.<backend>`.
        let Some((_, backend)) = model_name.split_once('.') else {
            return Err(ConfigError::field(
                "backend",
                format!(
                    "cannot tell which backend serves model '{model_name}': set 'backend' (or \
                     'platform') in config.pbtxt, or put a model file Triton recognizes \
                     (model.onnx, model.pt, model.py, model.plan, model.savedmodel/, \
                     model.graphdef, model.xml) in a version folder"
                ),
            ));
        };
        config.backend = backend.to_string();
        config.default_model_filename = format!("model.{backend}");
    }
    Ok(())
}

fn set_if_empty(field: &mut String, value: &str) {
    if field.is_empty() {
        *field = value.to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(entries: &[(&str, bool)]) -> VersionContents {
        entries.iter().map(|(n, d)| (n.to_string(), *d)).collect()
    }

    fn complete(config: ModelConfig, name: &str, version: &[(&str, bool)]) -> ModelConfig {
        let mut config = config;
        complete_backend_fields(&mut config, name, Some(&contents(version))).unwrap();
        config
    }

    #[test]
    fn backend_from_model_file() {
        let cases = [
            (
                "model.onnx",
                false,
                "onnxruntime",
                "onnxruntime_onnx",
                "model.onnx",
            ),
            // Triton leaves the file name to the PyTorch backend here.
            ("model.pt", false, "pytorch", "pytorch_libtorch", ""),
            ("model.py", false, "python", "", "model.py"),
            (
                "model.plan",
                false,
                "tensorrt",
                "tensorrt_plan",
                "model.plan",
            ),
            (
                "model.savedmodel",
                true,
                "tensorflow",
                "tensorflow_savedmodel",
                "model.savedmodel",
            ),
            (
                "model.graphdef",
                false,
                "tensorflow",
                "tensorflow_graphdef",
                "model.graphdef",
            ),
            ("model.xml", false, "openvino", "", "model.xml"),
        ];
        for (file, is_dir, backend, platform, default) in cases {
            let c = complete(ModelConfig::default(), "m", &[(file, is_dir)]);
            assert_eq!(
                (
                    c.backend.as_str(),
                    c.platform.as_str(),
                    c.default_model_filename.as_str()
                ),
                (backend, platform, default),
                "{file}"
            );
            assert_eq!(c.name, "m");
        }
    }

    #[test]
    fn platform_decides_backend() {
        let config = ModelConfig {
            platform: "onnxruntime_onnx".into(),
            ..Default::default()
        };
        let c = complete(config, "m", &[]);
        assert_eq!(
            (c.backend.as_str(), c.default_model_filename.as_str()),
            ("onnxruntime", "model.onnx")
        );
        let config = ModelConfig {
            backend: "pytorch".into(),
            ..Default::default()
        };
        let c = complete(config, "m", &[]);
        assert_eq!(c.platform, "pytorch_libtorch");
    }

    #[test]
    fn explicit_fields_are_kept() {
        let config = ModelConfig {
            name: "given".into(),
            backend: "python".into(),
            default_model_filename: "entry.py".into(),
            ..Default::default()
        };
        let c = complete(config, "folder", &[("model.onnx", false)]);
        assert_eq!((c.name.as_str(), c.backend.as_str()), ("given", "python"));
        assert_eq!(c.default_model_filename, "entry.py");
    }

    #[test]
    fn custom_backend_from_model_name() {
        let c = complete(ModelConfig::default(), "m.identity", &[]);
        assert_eq!(
            (c.backend.as_str(), c.default_model_filename.as_str()),
            ("identity", "model.identity")
        );
        let mut config = ModelConfig::default();
        let err = complete_backend_fields(&mut config, "plain", None).unwrap_err();
        assert!(err.message.contains("cannot tell which backend"), "{err}");
    }

    #[test]
    fn savedmodel_must_be_a_folder() {
        let c = complete(
            ModelConfig::default(),
            "m.x",
            &[("model.savedmodel", false)],
        );
        assert_eq!(c.backend, "x");
    }
}
