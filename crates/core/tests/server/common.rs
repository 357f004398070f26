//! Helpers shared by the server tests: repositories, servers, requests.

pub use std::{
    fs,
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

pub use bytes::Bytes;
pub use oxiserve_backend::{Backend, Model, ModelContext};
pub use oxiserve_backend_identity::IdentityBackend;
pub use oxiserve_core::{
    BackendRegistry, FailureReason, IndexEntry, ModelControlMode, ModelState, ModelStatistics,
    Server, ServerConfig,
};
pub use oxiserve_types::{
    DataType, Error, ErrorKind, InferRequest, InferResponse, RequestedOutput, Result, Tensor,
    bytes_elements, encode_bytes_elements,
};
pub use tempfile::TempDir;

// Helpers

/// Writes `files` (path -> contents; a path ending in '/' is a folder) under a
/// new temporary folder.
pub fn repo(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    write(dir.path(), files);
    dir
}

pub fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let full = root.join(path);
        if path.ends_with('/') {
            fs::create_dir_all(&full).unwrap();
        } else {
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, contents).unwrap();
        }
    }
}

/// An identity model: FP32 INPUT0 -> OUTPUT0 of any length, batching up to 8.
pub const ID: &str = r#"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"#;

/// An identity model with one instance that takes `delay_ms` per execution.
pub fn slow(delay_ms: u64, instances: u32) -> String {
    format!(
        r#"
backend: "identity"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }} ]
instance_group [ {{ count: {instances} kind: KIND_CPU }} ]
parameters {{ key: "execute_delay_ms" value: {{ string_value: "{delay_ms}" }} }}
"#
    )
}

/// The identity backend, except that a version folder holding a file named
/// `broken` fails to load.
pub struct Flaky;

impl Backend for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        if model.version_path.join("broken").exists() {
            return Err(Error::internal(format!(
                "version {} is broken on purpose",
                model.version
            )));
        }
        IdentityBackend.load(model)
    }
}

pub fn backends() -> BackendRegistry {
    let mut registry = BackendRegistry::default();
    registry.register(Arc::new(IdentityBackend));
    registry.register(Arc::new(Flaky));
    registry
}

pub fn server_with(dir: &TempDir, configure: impl FnOnce(&mut ServerConfig)) -> Server {
    server_with_backends(dir, backends(), configure)
}

/// [`server_with`], serving with `registry`'s backends.
pub fn server_with_backends(
    dir: &TempDir,
    registry: BackendRegistry,
    configure: impl FnOnce(&mut ServerConfig),
) -> Server {
    let mut config = ServerConfig {
        repositories: vec![dir.path().to_path_buf()],
        ..Default::default()
    };
    configure(&mut config);
    let server = Server::new(config, registry);
    let errors = server.load_startup_models().repository_errors;
    assert!(errors.is_empty(), "repository errors: {errors:?}");
    server
}

/// A server in the default mode (none) with every model of `dir` loaded.
pub fn server(dir: &TempDir) -> Server {
    server_with(dir, |_| {})
}

pub fn explicit(dir: &TempDir, startup: &[&str]) -> Server {
    server_with(dir, |c| {
        c.control_mode = ModelControlMode::Explicit;
        c.startup_models = startup.iter().map(|s| s.to_string()).collect();
    })
}

pub fn fp32(name: &str, shape: &[i64], values: &[f32]) -> Tensor {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::new(name, DataType::Fp32, shape.to_vec(), Bytes::from(data))
}

pub fn values(tensor: &Tensor) -> Vec<f32> {
    assert_eq!(tensor.datatype, DataType::Fp32);
    tensor
        .data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn strings(tensor: &Tensor) -> Vec<String> {
    assert_eq!(tensor.datatype, DataType::Bytes);
    let n = tensor.shape.iter().product::<i64>() as usize;
    bytes_elements(&tensor.name, &tensor.data, n)
        .unwrap()
        .into_iter()
        .map(|e| String::from_utf8(e.to_vec()).unwrap())
        .collect()
}

/// A request for `model` with INPUT0 = `data` as a [1, len] batch.
pub fn request(model: &str, version: Option<i64>, data: &[f32]) -> InferRequest {
    InferRequest {
        model_name: model.into(),
        model_version: version,
        inputs: vec![fp32("INPUT0", &[1, data.len() as i64], data)],
        ..Default::default()
    }
}

pub fn output<'a>(response: &'a InferResponse, name: &str) -> &'a Tensor {
    response
        .outputs
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no output {name} in {response:?}"))
}

pub async fn infer(server: &Server, request: InferRequest) -> Result<InferResponse> {
    server.infer(request)?.single().await
}

/// The statistics of `name`'s only loaded version.
pub fn stats(server: &Server, name: &str) -> ModelStatistics {
    let mut all = server.statistics(Some(name), None).unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.pop().unwrap()
}

/// Waits until the statistics of `name` have counted `requests` requests
/// (successes and failures). A request is counted once its execution is
/// over, which may be just after its response reached the client.
pub fn settled_stats(server: &Server, name: &str, requests: u64) -> ModelStatistics {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = stats(server, name);
        let counted = s.inference_stats.success.count + s.inference_stats.fail.count;
        if counted >= requests {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "the statistics of '{name}' never counted {requests} requests: {s:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn rows<'a>(index: &'a [IndexEntry], name: &str) -> Vec<&'a IndexEntry> {
    index.iter().filter(|e| e.name == name).collect()
}

#[track_caller]
pub fn assert_error(result: Result<impl std::fmt::Debug>, kind: ErrorKind, parts: &[&str]) {
    let error = result.expect_err("expected an error");
    assert_eq!(error.kind, kind, "{error:?}");
    for part in parts {
        assert!(
            error.message.contains(part),
            "expected {part:?} in: {}",
            error.message
        );
    }
}
