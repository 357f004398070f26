//! Platforms, backends and the model file each one loads by default.

/// The `platform: "ensemble"` of ensemble models.
pub const ENSEMBLE_PLATFORM: &str = "ensemble";

/// A backend Triton knows by name, with its platforms and default model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownBackend {
    /// The `backend:` name.
    pub name: &'static str,
    /// The `platform:` values that select this backend.
    pub platforms: &'static [&'static str],
    /// The file (or folder) loaded from each version folder by default.
    pub default_model_filename: &'static str,
}

/// Backends whose platform/backend pairing Triton checks.
pub const KNOWN_BACKENDS: &[KnownBackend] = &[
    KnownBackend {
        name: "tensorrt",
        platforms: &["tensorrt_plan"],
        default_model_filename: "model.plan",
    },
    KnownBackend {
        name: "onnxruntime",
        platforms: &["onnxruntime_onnx"],
        default_model_filename: "model.onnx",
    },
    KnownBackend {
        name: "tensorflow",
        platforms: &["tensorflow_graphdef", "tensorflow_savedmodel"],
        default_model_filename: "model.graphdef",
    },
    KnownBackend {
        name: "pytorch",
        platforms: &["pytorch_libtorch", "pytorch_torchscript"],
        default_model_filename: "model.pt",
    },
    KnownBackend {
        name: "openvino",
        platforms: &[],
        default_model_filename: "model.xml",
    },
    KnownBackend {
        name: "python",
        platforms: &[],
        default_model_filename: "model.py",
    },
];

/// Every platform name Triton accepts, for suggestions.
pub const PLATFORMS: &[&str] = &[
    "tensorrt_plan",
    "onnxruntime_onnx",
    "tensorflow_graphdef",
    "tensorflow_savedmodel",
    "pytorch_libtorch",
    "pytorch_torchscript",
    ENSEMBLE_PLATFORM,
];

/// The known backend named `name`.
pub fn backend(name: &str) -> Option<&'static KnownBackend> {
    KNOWN_BACKENDS.iter().find(|b| b.name == name)
}

/// The known backend that serves `platform`.
pub fn backend_for_platform(platform: &str) -> Option<&'static KnownBackend> {
    KNOWN_BACKENDS
        .iter()
        .find(|b| b.platforms.contains(&platform))
}

/// The default model file of a platform (TensorFlow's two platforms differ).
pub fn default_model_filename(platform: &str, backend_name: &str) -> Option<&'static str> {
    match platform {
        "tensorflow_savedmodel" => Some("model.savedmodel"),
        "tensorflow_graphdef" => Some("model.graphdef"),
        _ => backend(backend_name)
            .or_else(|| backend_for_platform(platform))
            .map(|b| b.default_model_filename),
    }
}
