//! The server core end to end: model repositories on disk, loaded with the
//! identity backend, serving requests, counting statistics, and loading and
//! unloading models as Triton does.

use std::{
    fs,
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use bytes::Bytes;
use oxiserve_backend::{Backend, Model, ModelContext};
use oxiserve_backend_identity::IdentityBackend;
use oxiserve_core::{
    BackendRegistry, FailureReason, IndexEntry, ModelControlMode, ModelState, ModelStatistics,
    Server, ServerConfig,
};
use oxiserve_types::{
    DataType, Error, ErrorKind, InferRequest, InferResponse, RequestedOutput, Result, Tensor,
    bytes_elements, encode_bytes_elements,
};
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Helpers

/// Writes `files` (path -> contents; a path ending in '/' is a folder) under a
/// new temporary folder.
fn repo(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    write(dir.path(), files);
    dir
}

fn write(root: &Path, files: &[(&str, &str)]) {
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
const ID: &str = r#"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"#;

/// An identity model with one instance that takes `delay_ms` per execution.
fn slow(delay_ms: u64, instances: u32) -> String {
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
struct Flaky;

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

fn backends() -> BackendRegistry {
    let mut registry = BackendRegistry::default();
    registry.register(Arc::new(IdentityBackend));
    registry.register(Arc::new(Flaky));
    registry
}

fn server_with(dir: &TempDir, configure: impl FnOnce(&mut ServerConfig)) -> Server {
    let mut config = ServerConfig {
        repositories: vec![dir.path().to_path_buf()],
        ..Default::default()
    };
    configure(&mut config);
    let server = Server::new(config, backends());
    let errors = server.load_startup_models();
    assert!(errors.is_empty(), "repository errors: {errors:?}");
    server
}

/// A server in the default mode (none) with every model of `dir` loaded.
fn server(dir: &TempDir) -> Server {
    server_with(dir, |_| {})
}

fn explicit(dir: &TempDir, startup: &[&str]) -> Server {
    server_with(dir, |c| {
        c.control_mode = ModelControlMode::Explicit;
        c.startup_models = startup.iter().map(|s| s.to_string()).collect();
    })
}

fn fp32(name: &str, shape: &[i64], values: &[f32]) -> Tensor {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::new(name, DataType::Fp32, shape.to_vec(), Bytes::from(data))
}

fn values(tensor: &Tensor) -> Vec<f32> {
    assert_eq!(tensor.datatype, DataType::Fp32);
    tensor
        .data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn strings(tensor: &Tensor) -> Vec<String> {
    assert_eq!(tensor.datatype, DataType::Bytes);
    let n = tensor.shape.iter().product::<i64>() as usize;
    bytes_elements(&tensor.name, &tensor.data, n)
        .unwrap()
        .into_iter()
        .map(|e| String::from_utf8(e.to_vec()).unwrap())
        .collect()
}

/// A request for `model` with INPUT0 = `data` as a [1, len] batch.
fn request(model: &str, version: Option<i64>, data: &[f32]) -> InferRequest {
    InferRequest {
        model_name: model.into(),
        model_version: version,
        inputs: vec![fp32("INPUT0", &[1, data.len() as i64], data)],
        ..Default::default()
    }
}

fn output<'a>(response: &'a InferResponse, name: &str) -> &'a Tensor {
    response
        .outputs
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no output {name} in {response:?}"))
}

async fn infer(server: &Server, request: InferRequest) -> Result<InferResponse> {
    server.infer(request)?.single().await
}

/// The statistics of `name`'s only loaded version.
fn stats(server: &Server, name: &str) -> ModelStatistics {
    let mut all = server.statistics(Some(name), None).unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.pop().unwrap()
}

/// Waits until the statistics of `name` have counted `requests` requests
/// (successes and failures). A request is counted once its execution is
/// over, which may be just after its response reached the client.
fn settled_stats(server: &Server, name: &str, requests: u64) -> ModelStatistics {
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

fn rows<'a>(index: &'a [IndexEntry], name: &str) -> Vec<&'a IndexEntry> {
    index.iter().filter(|e| e.name == name).collect()
}

#[track_caller]
fn assert_error(result: Result<impl std::fmt::Debug>, kind: ErrorKind, parts: &[&str]) {
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

// ---------------------------------------------------------------------------
// Loading at start-up and inference

#[tokio::test]
async fn startup_loads_models_and_infers_round_trip() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    assert!(server.is_live());
    assert!(server.is_ready());
    assert!(server.model_ready("id", None));
    assert!(server.model_ready("id", Some(1)));

    let mut req = request("id", None, &[1.5, -2.0, 3.25]);
    req.id = "req-42".into();
    // One final event carries the one response; the stream ends after it.
    let mut stream = server.infer(req).unwrap();
    let event = stream.next().await.unwrap();
    assert!(event.is_final);
    assert!(stream.next().await.is_none());
    let response = event.response.unwrap().unwrap();
    assert_eq!(response.model_name, "id");
    assert_eq!(response.model_version, 1);
    assert_eq!(response.id, "req-42");
    assert_eq!(response.outputs.len(), 1);
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![1, 3]);
    assert_eq!(values(out), [1.5, -2.0, 3.25]);

    let index = server.repository_index(false);
    assert_eq!(
        index,
        vec![IndexEntry {
            name: "id".into(),
            version: Some(1),
            state: Some(ModelState::Ready),
            reason: String::new(),
        }]
    );
}

#[tokio::test]
async fn a_batch_round_trips_row_by_row() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![3, 2]);
    assert_eq!(values(out), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[tokio::test]
async fn bytes_tensors_round_trip() {
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
"#;
    let dir = repo(&[("text/config.pbtxt", config), ("text/1/", "")]);
    let server = server(&dir);
    let data = encode_bytes_elements(["héllo", "", "wörld"]);
    let req = InferRequest {
        model_name: "text".into(),
        inputs: vec![Tensor::new("INPUT0", DataType::Bytes, vec![3], data)],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![3]);
    assert_eq!(strings(out), ["héllo", "", "wörld"]);
}

#[tokio::test]
async fn metadata_and_config_of_a_loaded_model() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let metadata = server.model_metadata("id", None).unwrap();
    assert_eq!(metadata.name, "id");
    assert_eq!(metadata.versions, ["1"]);
    assert_eq!(metadata.platform, "identity");
    assert_eq!(metadata.inputs[0].name, "INPUT0");
    assert_eq!(metadata.inputs[0].datatype, "FP32");
    assert_eq!(metadata.inputs[0].shape, vec![-1, -1]);
    assert_eq!(metadata.outputs[0].name, "OUTPUT0");
    let config = server.model_config("id", Some(1)).unwrap();
    assert_eq!(config.name, "id");
    assert_eq!(config.max_batch_size, 8);
    assert_error(
        server.model_metadata("nope", None),
        ErrorKind::NotFound,
        &["'nope'"],
    );
}

// ---------------------------------------------------------------------------
// Versions and lookup errors

/// Versions 1, 2 and 3 of a model served with the `all` policy; version 3
/// fails to load.
fn versioned() -> TempDir {
    let config = r#"
backend: "flaky"
max_batch_size: 8
version_policy: { all { } }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"#;
    repo(&[
        ("v/config.pbtxt", config),
        ("v/1/", ""),
        ("v/2/", ""),
        ("v/3/broken", ""),
    ])
}

#[tokio::test]
async fn highest_ready_version_serves_when_none_is_asked() {
    let dir = versioned();
    let server = server(&dir);
    let response = infer(&server, request("v", None, &[1.0])).await.unwrap();
    assert_eq!(response.model_version, 2);
    assert_eq!(server.model("v", None).unwrap().version(), 2);

    let response = infer(&server, request("v", Some(1), &[1.0])).await.unwrap();
    assert_eq!(response.model_version, 1);
    let response = infer(&server, request("v", Some(2), &[1.0])).await.unwrap();
    assert_eq!(response.model_version, 2);

    let metadata = server.model_metadata("v", None).unwrap();
    assert_eq!(metadata.versions, ["1", "2"]);
    // Each version counts its own requests.
    let s = server.statistics(Some("v"), Some(1)).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].version, 1);
    assert_eq!(server.statistics(Some("v"), None).unwrap().len(), 2);
}

#[tokio::test]
async fn failed_version_is_unavailable_with_its_reason() {
    let dir = versioned();
    let server = server(&dir);
    let index = server.repository_index(false);
    let v: Vec<_> = rows(&index, "v")
        .into_iter()
        .map(|e| (e.version, e.state))
        .collect();
    assert_eq!(
        v,
        vec![
            (Some(1), Some(ModelState::Ready)),
            (Some(2), Some(ModelState::Ready)),
            (Some(3), Some(ModelState::Unavailable)),
        ]
    );
    let row = rows(&index, "v")[2];
    assert!(row.reason.contains("broken on purpose"), "{row:?}");
    assert!(!server.model_ready("v", Some(3)));
    assert_eq!(
        rows(&server.repository_index(true), "v").len(),
        2,
        "ready-only index lists the ready versions"
    );
}

#[tokio::test]
async fn lookup_errors_and_their_kinds() {
    let dir = versioned();
    let server = server(&dir);
    // Unknown model.
    assert_error(
        infer(&server, request("nope", None, &[1.0])).await,
        ErrorKind::NotFound,
        &["'nope'"],
    );
    assert_error(
        infer(&server, request("nope", Some(1), &[1.0])).await,
        ErrorKind::NotFound,
        &["'nope'"],
    );
    // Unknown version of a known model.
    assert_error(
        infer(&server, request("v", Some(9), &[1.0])).await,
        ErrorKind::NotFound,
        &["'v'", "9"],
    );
    // A version that exists but is not ready (its kind: see
    // not_ready_version_is_unavailable).
    let error = infer(&server, request("v", Some(3), &[1.0]))
        .await
        .unwrap_err();
    for part in ["'v'", "3", "ready"] {
        assert!(error.message.contains(part), "{error:?}");
    }
    // Statistics of what is not served.
    assert_error(
        server.statistics(Some("nope"), None),
        ErrorKind::InvalidArg,
        &["'nope'"],
    );
    assert_error(
        server.statistics(Some("v"), Some(3)),
        ErrorKind::InvalidArg,
        &["'v'"],
    );
    assert_error(
        server.statistics(Some("v"), Some(9)),
        ErrorKind::InvalidArg,
        &["'v'"],
    );
}

/// Triton's ModelLifeCycle::GetModel (src/model_lifecycle.cc) answers
/// UNAVAILABLE "'x' version N is not at ready state" for a version it knows
/// that is not ready (failed to load, or unloaded): HTTP 503, not 404.
#[tokio::test]

async fn not_ready_version_is_unavailable() {
    let dir = versioned();
    let server = server(&dir);
    assert_error(
        infer(&server, request("v", Some(3), &[1.0])).await,
        ErrorKind::Unavailable,
        &["'v'", "3", "ready"],
    );
    assert_error(
        server.model_metadata("v", Some(3)),
        ErrorKind::Unavailable,
        &["'v'"],
    );
}

/// Triton's ModelLifeCycle::GetModel answers NOT_FOUND "'x' has no available
/// versions" when no version is asked for and none is ready (HTTP 404).
#[tokio::test]
async fn model_without_ready_versions_is_not_found() {
    let config = r#"
backend: "flaky"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"#;
    let dir = repo(&[("dead/config.pbtxt", config), ("dead/1/broken", "")]);
    let server = server(&dir);
    assert_error(
        infer(&server, request("dead", None, &[1.0])).await,
        ErrorKind::NotFound,
        &["'dead'", "no available versions"],
    );
}

// ---------------------------------------------------------------------------
// Statistics

#[tokio::test]
async fn statistics_count_requests_inferences_and_executions() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let before = stats(&server, "id");
    assert_eq!(before.name, "id");
    assert_eq!(before.version, 1);
    assert_eq!(before.inference_count, 0);
    assert_eq!(before.last_inference, 0);
    assert!(before.batch_stats.is_empty());

    for i in 0..3 {
        infer(&server, request("id", None, &[i as f32]))
            .await
            .unwrap();
    }
    let batch4 = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[4, 2], &[0.0; 8])],
        ..Default::default()
    };
    infer(&server, batch4).await.unwrap();

    let s = settled_stats(&server, "id", 4);
    let i = &s.inference_stats;
    assert_eq!(i.success.count, 4);
    assert_eq!(i.fail.count, 0);
    assert_eq!(i.queue.count, 4);
    assert_eq!(i.compute_input.count, 4);
    assert_eq!(i.compute_infer.count, 4);
    assert_eq!(i.compute_output.count, 4);
    assert_eq!(i.cache_hit.count, 0);
    assert_eq!(i.cache_miss.count, 0);
    // A batch of 4 is 4 inferences in 1 execution.
    assert_eq!(s.inference_count, 7);
    assert_eq!(s.execution_count, 4);
    let batches: Vec<(u64, u64)> = s
        .batch_stats
        .iter()
        .map(|b| (b.batch_size, b.compute_infer.count))
        .collect();
    assert_eq!(batches, vec![(1, 3), (4, 1)]);
    for b in &s.batch_stats {
        assert_eq!(b.compute_input.count, b.compute_infer.count);
        assert_eq!(b.compute_output.count, b.compute_infer.count);
    }
    assert!(s.last_inference > 0);
    assert!(i.success.ns > 0);

    // All models' statistics include it.
    let all = server.statistics(None, None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].inference_count, 7);
}

#[tokio::test]
async fn compute_time_covers_the_execution_delay() {
    let config = slow(30, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    infer(&server, request("slow", None, &[1.0])).await.unwrap();
    let s = settled_stats(&server, "slow", 1);
    // The identity backend sleeps between its compute marks: at least the
    // delay is compute_infer (a lower bound only, never an upper one).
    assert!(s.inference_stats.compute_infer.ns >= 30_000_000, "{s:?}");
    assert!(s.inference_stats.success.ns >= s.inference_stats.compute_infer.ns);
}

/// As in Triton, a request refused before it is queued (validation) is in
/// no counter; failures after that are (see the cancellation test).
#[tokio::test]
async fn refused_requests_are_not_counted() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    let wrong_type = InferRequest {
        model_name: "id".into(),
        inputs: vec![Tensor::new(
            "INPUT0",
            DataType::Int32,
            vec![1, 1],
            Bytes::from(vec![0u8; 4]),
        )],
        ..Default::default()
    };
    assert_error(
        server.infer(wrong_type),
        ErrorKind::InvalidArg,
        &["'INPUT0'", "'id'"],
    );
    let too_big = InferRequest {
        model_name: "id".into(),
        inputs: vec![fp32("INPUT0", &[9, 1], &[0.0; 9])],
        ..Default::default()
    };
    assert_error(
        server.infer(too_big),
        ErrorKind::InvalidArg,
        &["'id'", "batch-size"],
    );
    let untouched = ModelStatistics {
        name: "id".into(),
        version: 1,
        ..Default::default()
    };
    assert_eq!(stats(&server, "id"), untouched);

    infer(&server, request("id", None, &[1.0])).await.unwrap();
    let s = settled_stats(&server, "id", 1);
    assert_eq!(s.inference_stats.fail.count, 0);
    assert_eq!(s.inference_stats.success.count, 1);
    assert_eq!(s.inference_count, 1);
    assert_eq!(s.execution_count, 1);
}

// ---------------------------------------------------------------------------
// Instances, concurrency and cancellation

/// Names of this process's threads (Linux), as the kernel keeps them (15 bytes).
#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_string())
        .collect()
}

#[tokio::test]
async fn instance_group_count_gives_that_many_instances() {
    let config = slow(20, 3);
    let dir = repo(&[("trio/config.pbtxt", config.as_str()), ("trio/1/", "")]);
    let server = server(&dir);
    let group = &server.model_config("trio", None).unwrap().instance_group;
    assert_eq!(group.len(), 1);
    assert_eq!(group[0].count, 3);

    #[cfg(target_os = "linux")]
    {
        // One thread per instance, named after it.
        let mut instances: Vec<String> = thread_names()
            .into_iter()
            .filter(|n| n.starts_with("inst:trio_"))
            .collect();
        instances.sort();
        assert_eq!(
            instances,
            ["inst:trio_0_0", "inst:trio_0_1", "inst:trio_0_2"]
        );
    }

    // Concurrent requests all complete, each with its own data.
    let streams: Vec<_> = (0..9)
        .map(|i| server.infer(request("trio", None, &[i as f32])).unwrap())
        .collect();
    for (i, stream) in streams.into_iter().enumerate() {
        let response = stream.single().await.unwrap();
        assert_eq!(values(output(&response, "OUTPUT0")), [i as f32]);
    }
    let s = settled_stats(&server, "trio", 9);
    assert_eq!(s.inference_stats.success.count, 9);
    assert_eq!(s.execution_count, 9);
    assert_eq!(server.model("trio", None).unwrap().pending_requests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_from_many_tasks_all_complete() {
    let config = slow(5, 2);
    let dir = repo(&[("pair/config.pbtxt", config.as_str()), ("pair/1/", "")]);
    let server = server(&dir);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                let response = infer(&server, request("pair", None, &[i as f32, 1.0]))
                    .await
                    .unwrap();
                values(output(&response, "OUTPUT0"))
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap(), [i as f32, 1.0]);
    }
    let s = settled_stats(&server, "pair", 16);
    assert_eq!(s.inference_stats.success.count, 16);
    assert_eq!(s.execution_count, 16);
}

#[tokio::test]
async fn dropping_a_stream_before_it_is_served_cancels_the_request() {
    let config = slow(300, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    // The first request keeps the only instance busy; the second waits in
    // the queue and its client goes away; the third comes after it.
    let first = server.infer(request("slow", None, &[1.0])).unwrap();
    let second = server.infer(request("slow", None, &[2.0])).unwrap();
    drop(second);
    let third = server.infer(request("slow", None, &[3.0])).unwrap();

    let response = first.single().await.unwrap();
    assert_eq!(values(output(&response, "OUTPUT0")), [1.0]);
    let response = third.single().await.unwrap();
    assert_eq!(values(output(&response, "OUTPUT0")), [3.0]);

    let s = settled_stats(&server, "slow", 3);
    assert_eq!(s.inference_stats.success.count, 2);
    assert_eq!(s.inference_stats.fail.count, 1);
    assert_eq!(s.failures.get(FailureReason::Canceled), 1);
    // The cancelled request never executed.
    assert_eq!(s.execution_count, 2);
    assert_eq!(s.inference_count, 2);
    assert_eq!(s.inference_stats.queue.count, 2);
}

#[tokio::test]
async fn latency_histograms_count_successes_when_enabled() {
    let config = slow(0, 1);
    let files = [
        ("a/config.pbtxt", config.as_str()),
        ("a/1/", ""),
        ("a/2/", ""),
    ];
    let dir = repo(&files);
    let plain = server(&dir);
    assert_eq!(plain.model("a", None).unwrap().latency(), None);

    let dir = repo(&files);
    let server = server_with(&dir, |c| c.latency_histograms = true);
    for _ in 0..3 {
        infer(&server, request("a", None, &[1.0])).await.unwrap();
    }
    let s = settled_stats(&server, "a", 3);
    let model = server.model("a", None).unwrap();
    let latency = model.latency().unwrap();
    assert_eq!(latency.request.count(), s.inference_stats.success.count);
    assert_eq!(latency.queue.count(), 3);
    assert!(model.load_duration() > Duration::ZERO);
    let loaded: Vec<_> = server
        .loaded_models()
        .iter()
        .map(|m| (m.name().to_string(), m.version()))
        .collect();
    assert_eq!(loaded, [("a".to_string(), 2)]);
}

#[tokio::test]
async fn a_cancelled_stream_ends_with_a_cancelled_error() {
    let config = slow(200, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = server(&dir);
    let first = server.infer(request("slow", None, &[1.0])).unwrap();
    let second = server.infer(request("slow", None, &[2.0])).unwrap();
    // A frontend cancels explicitly through the flag, and still reads the stream.
    second.cancel_flag().cancel();
    first.single().await.unwrap();
    assert_error(second.single().await, ErrorKind::Cancelled, &["cancel"]);
}

// ---------------------------------------------------------------------------
// Classification, output selection and ordering, reshape

#[tokio::test]
async fn classification_with_class_count_and_labels() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" } ]
"#;
    let dir = repo(&[
        ("cls/config.pbtxt", config),
        ("cls/labels.txt", "cat\ndog\nbird\nfish\n"),
        ("cls/1/", ""),
    ]);
    let server = server(&dir);
    let classify = |k: u32| InferRequest {
        model_name: "cls".into(),
        inputs: vec![fp32(
            "INPUT0",
            &[2, 4],
            &[0.1, 0.7, 0.05, 0.15, 4.0, 1.0, 3.0, 2.0],
        )],
        outputs: vec![RequestedOutput {
            name: "OUTPUT0".into(),
            class_count: k,
            ..Default::default()
        }],
        ..Default::default()
    };
    let response = infer(&server, classify(2)).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![2, 2]);
    assert_eq!(
        strings(out),
        [
            "0.700000:1:dog",
            "0.150000:3:fish",
            "4.000000:0:cat",
            "3.000000:2:bird"
        ]
    );
    // More classes than there are: all of them.
    let response = infer(&server, classify(10)).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![2, 4]);
    // Without class_count, the raw tensor.
    let response = infer(&server, classify(0)).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.datatype, DataType::Fp32);
    assert_eq!(out.shape, vec![2, 4]);
}

#[tokio::test]
async fn classification_without_labels_or_batching() {
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 3 ] } ]
"#;
    let dir = repo(&[("cls/config.pbtxt", config), ("cls/1/", "")]);
    let server = server(&dir);
    let data: Vec<u8> = [5i32, -1, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    let req = InferRequest {
        model_name: "cls".into(),
        inputs: vec![Tensor::new(
            "INPUT0",
            DataType::Int32,
            vec![3],
            Bytes::from(data),
        )],
        outputs: vec![RequestedOutput {
            name: "OUTPUT0".into(),
            class_count: 2,
            ..Default::default()
        }],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    assert_eq!(out.shape, vec![2]);
    // Integers print as they are.
    assert_eq!(strings(out), ["9:2", "5:0"]);
}

/// Three inputs, three outputs: OUTPUTn echoes INPUTn.
const TRIPLE: &str = r#"
backend: "identity"
max_batch_size: 2
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "INPUT2" data_type: TYPE_FP32 dims: [ 1 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "OUTPUT2" data_type: TYPE_FP32 dims: [ 1 ] }
]
"#;

fn triple_request(outputs: &[&str]) -> InferRequest {
    InferRequest {
        model_name: "triple".into(),
        // Inputs in another order than the configuration's.
        inputs: vec![
            fp32("INPUT2", &[1, 1], &[2.0]),
            fp32("INPUT0", &[1, 1], &[0.0]),
            fp32("INPUT1", &[1, 1], &[1.0]),
        ],
        outputs: outputs
            .iter()
            .map(|n| RequestedOutput {
                name: n.to_string(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn output_names(response: &InferResponse) -> Vec<&str> {
    response.outputs.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn outputs_come_in_configuration_order() {
    let dir = repo(&[("triple/config.pbtxt", TRIPLE), ("triple/1/", "")]);
    let server = server(&dir);
    let response = infer(&server, triple_request(&[])).await.unwrap();
    assert_eq!(output_names(&response), ["OUTPUT0", "OUTPUT1", "OUTPUT2"]);
    for (i, name) in ["OUTPUT0", "OUTPUT1", "OUTPUT2"].iter().enumerate() {
        assert_eq!(values(output(&response, name)), [i as f32]);
    }
    // Only the outputs asked for; the identity backend answers in its
    // configuration's order whatever order they were asked in.
    let response = infer(&server, triple_request(&["OUTPUT2", "OUTPUT0"]))
        .await
        .unwrap();
    assert_eq!(output_names(&response), ["OUTPUT0", "OUTPUT2"]);
    assert_eq!(values(output(&response, "OUTPUT2")), [2.0]);
    // Asking twice gives the output once.
    let response = infer(&server, triple_request(&["OUTPUT1", "OUTPUT1"]))
        .await
        .unwrap();
    assert_eq!(output_names(&response), ["OUTPUT1"]);
    // An unknown output is refused.
    assert_error(
        server.infer(triple_request(&["OUTPUT9"])),
        ErrorKind::InvalidArg,
        &["'OUTPUT9'", "'triple'"],
    );
}

#[tokio::test]
async fn reshape_is_applied_for_the_backend_and_undone_for_the_client() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[3, 4], &[1.0; 12])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    let out = output(&response, "OUTPUT0");
    // The backend saw [3,2,2]; the client gets the configured dims back.
    assert_eq!(out.shape, vec![3, 4]);
    assert_eq!(out.data.len(), 48);
}

#[tokio::test]
async fn input_reshape_is_what_the_backend_gets() {
    // The output is not reshaped: it shows what the backend received.
    let config = r#"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 6 ] } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[5, 2, 3], &[0.5; 30])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![5, 6]);
}

/// Triton (InferenceResponse::Output::Reshape) maps the reshape's -1
/// dimensions back onto the dims' -1 dimensions, in order.
#[tokio::test]

async fn output_reshape_with_a_variable_dimension_is_undone() {
    let config = r#"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 3 ] reshape: { shape: [ -1, 6 ] } } ]
"#;
    let dir = repo(&[("rs/config.pbtxt", config), ("rs/1/", "")]);
    let server = server(&dir);
    let req = InferRequest {
        model_name: "rs".into(),
        inputs: vec![fp32("INPUT0", &[1, 5, 2, 3], &[0.5; 30])],
        ..Default::default()
    };
    let response = infer(&server, req).await.unwrap();
    assert_eq!(output(&response, "OUTPUT0").shape, vec![1, 5, 2, 3]);
}

// ---------------------------------------------------------------------------
// Failed models and the repository index

#[tokio::test]
async fn failed_models_are_unavailable_with_a_reason_while_others_serve() {
    let dir = repo(&[
        ("good/config.pbtxt", ID),
        ("good/1/", ""),
        (
            "nobackend/config.pbtxt",
            &ID.replace("\"identity\"", "\"nosuch\""),
        ),
        ("nobackend/1/", ""),
        ("badconfig/config.pbtxt", "max_batch_size: banana"),
        ("badconfig/1/", ""),
    ]);
    let server = server(&dir);

    let index = server.repository_index(false);
    let names: Vec<&str> = index.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["badconfig", "good", "nobackend"]);

    let bad = rows(&index, "badconfig");
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].state, Some(ModelState::Unavailable));
    assert!(bad[0].reason.contains("banana"), "{:?}", bad[0]);

    let nobackend = rows(&index, "nobackend");
    assert_eq!(nobackend.len(), 1);
    assert_eq!(nobackend[0].version, Some(1));
    assert_eq!(nobackend[0].state, Some(ModelState::Unavailable));
    assert!(nobackend[0].reason.contains("nosuch"), "{:?}", nobackend[0]);

    let good = rows(&index, "good");
    assert_eq!(good[0].state, Some(ModelState::Ready));
    let ready: Vec<String> = server
        .repository_index(true)
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(ready, ["good"]);

    infer(&server, request("good", None, &[1.0])).await.unwrap();
    assert!(
        infer(&server, request("nobackend", None, &[1.0]))
            .await
            .is_err()
    );
    assert!(
        infer(&server, request("badconfig", None, &[1.0]))
            .await
            .is_err()
    );
    assert!(!server.model_ready("nobackend", None));
    assert!(!server.model_ready("badconfig", None));
    // Without strict readiness the server is ready anyway.
    assert!(server.is_ready());
}

#[test]
fn a_missing_repository_is_reported() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = Server::new(
        ServerConfig {
            repositories: vec![dir.path().to_path_buf(), dir.path().join("missing")],
            ..Default::default()
        },
        backends(),
    );
    let errors = server.load_startup_models();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("missing"), "{errors:?}");
    assert!(server.model_ready("id", None));
}

#[test]
fn strict_readiness_requires_every_model_to_load() {
    let dir = repo(&[
        ("good/config.pbtxt", ID),
        ("good/1/", ""),
        (
            "nobackend/config.pbtxt",
            &ID.replace("\"identity\"", "\"nosuch\""),
        ),
        ("nobackend/1/", ""),
    ]);
    let strict = server_with(&dir, |c| c.strict_readiness = true);
    assert!(strict.is_live());
    assert!(!strict.is_ready());
    assert!(strict.model_ready("good", None));

    let dir = repo(&[("good/config.pbtxt", ID), ("good/1/", "")]);
    let strict = server_with(&dir, |c| c.strict_readiness = true);
    assert!(strict.is_ready());
}

/// Triton (InferenceServer::IsReady): "If a model status is present but no
/// version status, the model is not ready as there is no proper version to be
/// served". The core's own doc says: with strict readiness, every model it
/// tried to load is ready.
#[test]

fn strict_readiness_counts_a_model_without_versions() {
    let dir = repo(&[
        ("good/config.pbtxt", ID),
        ("good/1/", ""),
        ("empty/config.pbtxt", ID),
    ]);
    let strict = server_with(&dir, |c| c.strict_readiness = true);
    let index = strict.repository_index(false);
    assert_eq!(
        rows(&index, "empty")[0].state,
        Some(ModelState::Unavailable)
    );
    assert!(!strict.is_ready());
}

#[tokio::test]
async fn strict_readiness_ignores_unloaded_models() {
    let dir = repo(&[
        ("a/config.pbtxt", ID),
        ("a/1/", ""),
        ("b/config.pbtxt", ID),
        ("b/1/", ""),
    ]);
    let server = server_with(&dir, |c| {
        c.strict_readiness = true;
        c.control_mode = ModelControlMode::Explicit;
        c.startup_models = vec!["*".into()];
    });
    assert!(server.model_ready("a", None) && server.model_ready("b", None));
    assert!(server.is_ready());
    server.unload_model("a").unwrap();
    assert!(server.is_ready());
}

// ---------------------------------------------------------------------------
// Model control

#[tokio::test]
async fn explicit_mode_loads_only_what_is_asked() {
    let dir = repo(&[
        ("a/config.pbtxt", ID),
        ("a/1/", ""),
        ("b/config.pbtxt", ID),
        ("b/1/", ""),
    ]);
    let server = explicit(&dir, &["b"]);
    assert!(server.model_ready("b", None));
    assert!(!server.model_ready("a", None));
    let index = server.repository_index(false);
    assert_eq!(
        rows(&index, "a"),
        [&IndexEntry {
            name: "a".into(),
            version: None,
            state: None,
            reason: String::new(),
        }]
    );
    assert_error(
        infer(&server, request("a", None, &[1.0])).await,
        ErrorKind::NotFound,
        &["'a'"],
    );

    server.load_model("a").unwrap();
    let response = infer(&server, request("a", None, &[7.0])).await.unwrap();
    assert_eq!(values(output(&response, "OUTPUT0")), [7.0]);
    assert_eq!(
        rows(&server.repository_index(true), "a")[0].state,
        Some(ModelState::Ready)
    );
}

#[tokio::test]
async fn explicit_mode_unloads_a_model() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = explicit(&dir, &["a"]);
    infer(&server, request("a", None, &[1.0])).await.unwrap();
    server.unload_model("a").unwrap();
    assert!(!server.model_ready("a", None));
    assert_error(
        infer(&server, request("a", None, &[1.0])).await,
        ErrorKind::NotFound,
        &["'a'"],
    );
    assert!(infer(&server, request("a", Some(1), &[1.0])).await.is_err());
    let a = server.repository_index(false);
    let a = rows(&a, "a");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].version, Some(1));
    assert_eq!(a[0].state, Some(ModelState::Unavailable));
    assert_eq!(a[0].reason, "unloaded");
    assert!(server.repository_index(true).is_empty());
    // Statistics go with the model.
    assert!(server.statistics(Some("a"), None).is_err());
    assert!(server.statistics(None, None).unwrap().is_empty());
    // Unloading what is not loaded is accepted, as in Triton.
    server.unload_model("zzz").unwrap();
    server.unload_model("a").unwrap();
    // And it loads again.
    server.load_model("a").unwrap();
    infer(&server, request("a", None, &[1.0])).await.unwrap();
}

#[tokio::test]
async fn unloading_lets_queued_requests_finish() {
    let config = slow(100, 1);
    let dir = repo(&[("slow/config.pbtxt", config.as_str()), ("slow/1/", "")]);
    let server = explicit(&dir, &["slow"]);
    let streams: Vec<_> = (0..3)
        .map(|i| server.infer(request("slow", None, &[i as f32])).unwrap())
        .collect();
    server.unload_model("slow").unwrap();
    for (i, stream) in streams.into_iter().enumerate() {
        let response = stream.single().await.unwrap();
        assert_eq!(values(output(&response, "OUTPUT0")), [i as f32]);
    }
    assert!(server.infer(request("slow", None, &[1.0])).is_err());
}

#[tokio::test]
async fn explicit_reload_picks_up_changes() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = explicit(&dir, &["a"]);
    let batch4 = || InferRequest {
        model_name: "a".into(),
        inputs: vec![fp32("INPUT0", &[4, 1], &[0.0; 4])],
        ..Default::default()
    };
    infer(&server, batch4()).await.unwrap();

    // A new version and a smaller max_batch_size.
    write(
        dir.path(),
        &[
            (
                "a/config.pbtxt",
                &ID.replace("max_batch_size: 8", "max_batch_size: 2"),
            ),
            ("a/2/", ""),
        ],
    );
    // Nothing changes until the model is loaded again.
    assert_eq!(server.model("a", None).unwrap().version(), 1);
    server.load_model("a").unwrap();
    let response = infer(&server, request("a", None, &[1.0])).await.unwrap();
    assert_eq!(response.model_version, 2);
    assert_eq!(server.model_config("a", None).unwrap().max_batch_size, 2);
    assert_error(
        server.infer(batch4()),
        ErrorKind::InvalidArg,
        &["'a'", "batch-size"],
    );
    assert!(!server.model_ready("a", Some(1)));
    // The new version's statistics start from zero.
    let s = settled_stats(&server, "a", 1);
    assert_eq!(s.version, 2);
    assert_eq!(s.inference_stats.success.count, 1);
}

#[test]
fn explicit_load_errors() {
    let dir = repo(&[
        ("a/config.pbtxt", ID),
        ("a/1/", ""),
        ("bad/config.pbtxt", "max_batch_size: banana"),
        ("bad/1/", ""),
        (
            "nobackend/config.pbtxt",
            &ID.replace("\"identity\"", "\"nosuch\""),
        ),
        ("nobackend/1/", ""),
    ]);
    let server = explicit(&dir, &[]);
    assert_error(server.load_model("zzz"), ErrorKind::Internal, &["'zzz'"]);
    assert_error(server.load_model("bad"), ErrorKind::InvalidArg, &["'bad'"]);
    assert_error(
        server.load_model("nobackend"),
        ErrorKind::InvalidArg,
        &["'nobackend'", "nosuch"],
    );
    let index = server.repository_index(false);
    assert_eq!(rows(&index, "bad")[0].state, Some(ModelState::Unavailable));
    assert_eq!(
        rows(&index, "nobackend")[0].state,
        Some(ModelState::Unavailable)
    );
    assert_eq!(rows(&index, "a")[0].state, None);
}

/// Triton's model management docs: "when attempting to reload an already
/// loaded model, if the reload fails for any reason the already loaded model
/// will be unchanged and will remain loaded".
#[tokio::test]

async fn failed_reload_keeps_the_loaded_model() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = explicit(&dir, &["a"]);
    write(dir.path(), &[("a/config.pbtxt", "max_batch_size: banana")]);
    assert!(server.load_model("a").is_err());
    assert!(server.model_ready("a", Some(1)));
    infer(&server, request("a", None, &[1.0])).await.unwrap();
}

#[test]
fn none_mode_refuses_load_and_unload() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = server(&dir);
    assert_error(
        server.load_model("a"),
        ErrorKind::Unavailable,
        &["not allowed"],
    );
    assert_error(
        server.unload_model("a"),
        ErrorKind::Unavailable,
        &["not allowed"],
    );
    assert!(server.model_ready("a", None));
    let poll = server_with(&dir, |c| c.control_mode = ModelControlMode::Poll);
    assert_error(
        poll.load_model("a"),
        ErrorKind::Unavailable,
        &["not allowed"],
    );
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let dir = repo(&[("id/config.pbtxt", ID), ("id/1/", "")]);
    let server = server(&dir);
    infer(&server, request("id", None, &[1.0])).await.unwrap();
    server.shutdown();
    assert!(!server.is_live());
    assert!(!server.is_ready());
    assert!(server.infer(request("id", None, &[1.0])).is_err());
}
