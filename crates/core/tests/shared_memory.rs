//! The shared memory extension through `Server::infer`: inputs read from
//! registered regions before validation, outputs written into them, and the
//! errors of each step, with the identity backend and real POSIX shared
//! memory objects under /dev/shm.

use std::{
    fs,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use oxiserve_backend_identity::IdentityBackend;
use oxiserve_core::{BackendRegistry, Server, ServerConfig};
use oxiserve_types::{
    DataType, ErrorKind, InferRequest, ParameterValue, Parameters, RequestedOutput, Tensor,
    encode_bytes_elements,
};
use tempfile::TempDir;

/// A shared memory object made for one test, removed when dropped.
struct ShmObject {
    key: String,
    path: PathBuf,
}

impl ShmObject {
    fn new(size: u64) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("oxiserve_server_test_{}_{n}", std::process::id());
        let path = PathBuf::from("/dev/shm").join(&name);
        fs::File::create(&path).unwrap().set_len(size).unwrap();
        Self {
            key: format!("/{name}"),
            path,
        }
    }

    fn contents(&self) -> Vec<u8> {
        fs::read(&self.path).unwrap()
    }

    fn write(&self, offset: u64, data: &[u8]) {
        use std::os::unix::fs::FileExt;
        let file = fs::OpenOptions::new().write(true).open(&self.path).unwrap();
        file.write_all_at(data, offset).unwrap();
    }
}

impl Drop for ShmObject {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A server with `model` (an identity model of `datatype`, dims [-1]).
fn server(datatype: &str) -> (TempDir, Server) {
    let dir = TempDir::new().unwrap();
    let config = format!(
        r#"
backend: "identity"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: {datatype} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: {datatype} dims: [ -1 ] }} ]
"#
    );
    fs::create_dir_all(dir.path().join("model/1")).unwrap();
    fs::write(dir.path().join("model/config.pbtxt"), config).unwrap();
    let mut backends = BackendRegistry::default();
    backends.register(Arc::new(IdentityBackend));
    let server = Server::new(
        ServerConfig {
            repositories: vec![dir.path().to_path_buf()],
            ..Default::default()
        },
        backends,
    );
    assert!(server.load_startup_models().repository_errors.is_empty());
    (dir, server)
}

fn shm(region: &str, byte_size: u64, offset: u64) -> Parameters {
    [
        (
            "shared_memory_region".to_string(),
            ParameterValue::String(region.into()),
        ),
        (
            "shared_memory_byte_size".into(),
            ParameterValue::Uint(byte_size),
        ),
        ("shared_memory_offset".into(), ParameterValue::Uint(offset)),
    ]
    .into()
}

fn request(
    datatype: DataType,
    shape: Vec<i64>,
    input: Parameters,
    output: Parameters,
) -> InferRequest {
    InferRequest {
        model_name: "model".into(),
        inputs: vec![Tensor {
            parameters: input,
            ..Tensor::new("INPUT0", datatype, shape, bytes::Bytes::new())
        }],
        outputs: vec![RequestedOutput {
            name: "OUTPUT0".into(),
            parameters: output,
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[tokio::test]
async fn fp32_in_and_out_through_one_object() {
    let (_dir, server) = server("TYPE_FP32");
    let object = ShmObject::new(64);
    let values: Vec<u8> = [1.5f32, -2.0, 3.25]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    object.write(4, &values);
    let regions = server.shared_memory();
    regions.register("in", &object.key, 0, 32).unwrap();
    regions.register("out", &object.key, 32, 32).unwrap();
    let response = server
        .infer(request(
            DataType::Fp32,
            vec![1, 3],
            shm("in", 12, 4),
            shm("out", 16, 2),
        ))
        .unwrap()
        .single()
        .await
        .unwrap();
    let output = &response.outputs[0];
    assert_eq!(output.shape, vec![1, 3]);
    assert!(output.data.is_empty());
    assert_eq!(output.parameters, shm("out", 16, 2));
    assert_eq!(&object.contents()[34..46], &values[..]);
}

#[tokio::test]
async fn bytes_tensors_keep_their_layout() {
    let (_dir, server) = server("TYPE_STRING");
    let object = ShmObject::new(128);
    let data = encode_bytes_elements(["엔비디아", "", "x"]);
    object.write(0, &data);
    let size = data.len() as u64;
    server
        .shared_memory()
        .register("r", &object.key, 0, 128)
        .unwrap();
    server
        .infer(request(
            DataType::Bytes,
            vec![1, 3],
            shm("r", size, 0),
            shm("r", 64, 64),
        ))
        .unwrap()
        .single()
        .await
        .unwrap();
    assert_eq!(&object.contents()[64..64 + data.len()], &data[..]);

    // Too small an output span is Triton's internal error, after execution.
    let err = server
        .infer(request(
            DataType::Bytes,
            vec![1, 3],
            shm("r", size, 0),
            shm("r", 4, 64),
        ))
        .unwrap()
        .single()
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Internal);
    assert!(err.message.contains("should be at least 25 bytes"), "{err}");
}

#[tokio::test]
async fn region_errors_come_before_validation() {
    let (_dir, server) = server("TYPE_FP32");
    let object = ShmObject::new(16);
    server
        .shared_memory()
        .register("r", &object.key, 0, 16)
        .unwrap();
    let err = |input: Parameters, output: Parameters| {
        server
            .infer(request(DataType::Fp32, vec![1, 3], input, output))
            .unwrap_err()
    };
    let e = err(shm("nope", 12, 0), Parameters::new());
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(e.message, "Unable to find shared memory region: 'nope'");
    let e = err(shm("r", 12, 8), Parameters::new());
    assert_eq!(e.kind, ErrorKind::InvalidArg);
    assert!(e.message.contains("input 'INPUT0'"), "{e}");
    let e = err(shm("r", 12, 0), shm("r", 12, 16));
    assert!(
        e.message
            .starts_with("Invalid offset for shared memory region: 'r' (output 'OUTPUT0'"),
        "{e}"
    );
    // The region's bytes then meet the usual validation.
    let e = err(shm("r", 8, 0), Parameters::new());
    assert!(e.message.contains("input byte size mismatch"), "{e}");
}

/// A request holds its regions until its final response, and lets go of
/// them before the response reaches the caller: a client that unregisters
/// them once it has the response never finds them in use. A request refused
/// before it runs holds none.
#[tokio::test]
async fn regions_are_free_once_the_response_is_out() {
    let (_dir, server) = server("TYPE_FP32");
    let object = ShmObject::new(64);
    object.write(0, &1.5f32.to_le_bytes());
    let regions = server.shared_memory();
    for _ in 0..20 {
        regions.register("in", &object.key, 0, 32).unwrap();
        regions.register("out", &object.key, 32, 32).unwrap();
        server
            .infer(request(
                DataType::Fp32,
                vec![1, 1],
                shm("in", 4, 0),
                shm("out", 4, 0),
            ))
            .unwrap()
            .single()
            .await
            .unwrap();
        regions.unregister("in").unwrap();
        regions.unregister("out").unwrap();
    }
    assert_eq!(&object.contents()[32..36], &1.5f32.to_le_bytes());

    regions.register("in", &object.key, 0, 32).unwrap();
    regions.register("out", &object.key, 32, 32).unwrap();
    // 4 bytes are not the 2 elements of the shape: refused in validation.
    let err = server
        .infer(request(
            DataType::Fp32,
            vec![1, 2],
            shm("in", 4, 0),
            shm("out", 8, 0),
        ))
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArg, "{err}");
    regions.unregister_all().unwrap();
    assert!(regions.status(None).unwrap().is_empty());
}
