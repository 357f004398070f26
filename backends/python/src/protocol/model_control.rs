//! The model control frames (`pb_utils.load_model`, `unload_model`,
//! `is_model_ready`): each a round trip answered by a `ModelControlReply`
//! with the call's tag.

use bytes::Bytes;

/// A model control call of the stub, its arguments as the model gave them.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelControlCall {
    /// `load_model(model_name, config, files)`: `config` is `""` for none;
    /// `files` are the dictionary's items (names such as `file:1/model.onnx`).
    Load {
        model_name: String,
        config: String,
        files: Vec<(String, Bytes)>,
    },
    /// `unload_model(model_name, unload_dependents)`.
    Unload {
        model_name: String,
        unload_dependents: bool,
    },
    /// `is_model_ready(model_name, model_version)`: the version as the
    /// string the model gave (`""` for the latest).
    IsReady {
        model_name: String,
        model_version: String,
    },
}
