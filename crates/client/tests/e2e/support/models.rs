//! The test models, written for the target as tests/support/models.py
//! writes them: identity models use oxiserve's identity backend, or on
//! Triton (which has only the Python backend here) the Python suite's
//! identity `model.py`; the decoupled `repeat` model is Python on both.

use std::path::Path;

use oxiserve_client::DataType;

use super::server::triton;

/// A model folder: `config.pbtxt` and version files.
pub struct Model {
    pub name: String,
    pub config: String,
    /// (path in the folder, contents)
    pub files: Vec<(String, String)>,
}

impl Model {
    /// Writes the folder under `repo`.
    pub fn write(&self, repo: &Path) {
        let folder = repo.join(&self.name);
        std::fs::create_dir_all(folder.join("1")).unwrap();
        std::fs::write(folder.join("config.pbtxt"), &self.config).unwrap();
        for (path, text) in &self.files {
            std::fs::write(folder.join(path), text).unwrap();
        }
    }
}

/// The Python suite's stand-in for the identity backend.
pub fn identity_py() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/python_backend/models/identity/model.py"
    );
    std::fs::read_to_string(path).expect("tests/python_backend/models/identity/model.py")
}

/// An identity model: INPUTi -> OUTPUTi of `datatypes[i]`, dims `[-1]`.
pub fn identity(name: &str, datatypes: &[DataType], max_batch_size: u32) -> Model {
    let tensor = |prefix: &str, (i, d): (usize, &DataType)| {
        format!(
            "{{ name: \"{prefix}{i}\", data_type: {}, dims: [ -1 ] }}",
            d.config_name()
        )
    };
    let list = |prefix: &str| {
        let tensors: Vec<String> = datatypes
            .iter()
            .enumerate()
            .map(|t| tensor(prefix, t))
            .collect();
        tensors.join(",\n  ")
    };
    let backend = if triton() { "python" } else { "identity" };
    let config = format!(
        "name: \"{name}\"\nbackend: \"{backend}\"\nmax_batch_size: {max_batch_size}\n\
         input [\n  {}\n]\noutput [\n  {}\n]\ninstance_group [ {{ count: 1, kind: KIND_CPU }} ]\n",
        list("INPUT"),
        list("OUTPUT")
    );
    let files = match triton() {
        true => vec![("1/model.py".into(), identity_py())],
        false => Vec::new(),
    };
    Model {
        name: name.into(),
        config,
        files,
    }
}

/// A decoupled model: for IN = [n], n responses OUT = [0] .. [n-1], then
/// the final flag alone; a negative n is an error response.
pub fn repeat() -> Model {
    let config = "name: \"repeat\"\nbackend: \"python\"\nmax_batch_size: 0\n\
        input [ { name: \"IN\", data_type: TYPE_INT32, dims: [ 1 ] } ]\n\
        output [ { name: \"OUT\", data_type: TYPE_INT32, dims: [ 1 ] } ]\n\
        model_transaction_policy { decoupled: true }\n";
    Model {
        name: "repeat".into(),
        config: config.into(),
        files: vec![("1/model.py".into(), REPEAT_PY.into())],
    }
}

const REPEAT_PY: &str = r#"import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        final = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
        for request in requests:
            sender = request.get_response_sender()
            n = int(pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()[0])
            if n < 0:
                error = pb_utils.TritonError(f"cannot repeat {n} times")
                sender.send(pb_utils.InferenceResponse(error=error), flags=final)
                continue
            for i in range(n):
                out = pb_utils.Tensor("OUT", np.array([i], dtype=np.int32))
                sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
            sender.send(flags=final)
        return None
"#;
