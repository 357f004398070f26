//! Model management beyond plain load and unload: load requests with a
//! configuration, files or a version; unloading
//! an ensemble's dependents; polling; warmup; reloads under traffic.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};

use bytes::Bytes;
use oxiserve_core::repository::{LoadRequest, ModelId, PollState, snapshot};

use crate::common::*;

/// `ID` as the JSON a load request's `config` parameter carries.
fn id_json(name: &str, max_batch_size: u32) -> String {
    format!(
        r#"{{"name":"{name}","backend":"identity","max_batch_size":{max_batch_size},
        "input":[{{"name":"INPUT0","data_type":"TYPE_FP32","dims":[-1]}}],
        "output":[{{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[-1]}}]}}"#
    )
}

fn with_config(json: String) -> LoadRequest {
    LoadRequest {
        config: Some(json),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_config_override_replaces_config_pbtxt_until_the_next_plain_load() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = explicit(&dir, &["a"]);
    server
        .load_model_with("a", &with_config(id_json("a", 2)))
        .unwrap();
    assert_eq!(server.model_config("a", None).unwrap().max_batch_size, 2);
    infer(&server, request("a", None, &[1.0])).await.unwrap();
    // The folder did not change, but the override must be undone.
    server.load_model("a").unwrap();
    assert_eq!(server.model_config("a", None).unwrap().max_batch_size, 8);

    let e = server
        .load_model_with("a", &with_config("{\"max_batch_size\": \"x\"".into()))
        .unwrap_err();
    assert!(e.message.starts_with("Invalid config override: "), "{e}");
    let e = server
        .load_model_with("a", &with_config(id_json("b", 2)))
        .unwrap_err();
    assert!(
        e.message.contains("differs from the model's folder name"),
        "{e}"
    );
    assert!(
        server.model_ready("a", None),
        "a failed reload keeps it serving"
    );
}

#[tokio::test]
async fn uploaded_files_make_a_model_that_is_not_in_the_repository() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = explicit(&dir, &[]);
    let request = LoadRequest {
        config: Some(id_json("uploaded", 8)),
        files: vec![("3/weights.bin".into(), Bytes::from_static(b"\0\x01"))],
        version: None,
    };
    server.load_model_with("uploaded", &request).unwrap();
    let response = infer(&server, request_for("uploaded", &[2.0]))
        .await
        .unwrap();
    assert_eq!(response.model_version, 3);
    assert!(
        !dir.path().join("uploaded").exists(),
        "the repository is untouched"
    );

    let files_only = LoadRequest {
        files: request.files.clone(),
        ..Default::default()
    };
    assert_error(
        server.load_model_with("other", &files_only),
        ErrorKind::InvalidArg,
        &["'config' must be specified for model file override"],
    );
    let escaping = LoadRequest {
        files: vec![("../1/evil".into(), Bytes::new())],
        ..request
    };
    assert_error(
        server.load_model_with("other", &escaping),
        ErrorKind::InvalidArg,
        &["must stay within the model directory"],
    );
}

fn request_for(model: &str, values: &[f32]) -> InferRequest {
    request(model, None, values)
}

#[tokio::test]
async fn a_version_can_be_loaded_whatever_the_policy() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", ""), ("a/2/", "")]);
    let server = explicit(&dir, &["a"]);
    assert_eq!(server.model("a", None).unwrap().version(), 2);
    let one = LoadRequest {
        version: Some(1),
        ..Default::default()
    };
    server.load_model_with("a", &one).unwrap();
    assert_eq!(server.model("a", None).unwrap().version(), 1);
    assert!(!server.model_ready("a", Some(2)));
    let missing = LoadRequest {
        version: Some(7),
        ..Default::default()
    };
    assert_error(
        server.load_model_with("a", &missing),
        ErrorKind::InvalidArg,
        &["version 7", "versions there: 1, 2"],
    );
    assert_eq!(server.model("a", None).unwrap().version(), 1);
}

const ENSEMBLE: &str = r#"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [ {
  model_name: "a" model_version: -1
  input_map { key: "INPUT0" value: "IN" }
  output_map { key: "OUTPUT0" value: "OUT" }
} ] }
"#;

#[test]
fn unloading_dependents_unloads_members_loaded_only_for_the_ensemble() {
    let files = [
        ("a/config.pbtxt", ID),
        ("a/1/", ""),
        ("e/config.pbtxt", ENSEMBLE),
        ("e/1/", ""),
    ];
    let dir = repo(&files);
    let server = explicit(&dir, &["e"]);
    assert!(server.model_ready("a", None), "loaded with the ensemble");
    server.unload_model("e").unwrap();
    assert!(
        server.model_ready("a", None),
        "a plain unload keeps members"
    );
    server.load_model("e").unwrap();
    server.unload_model_and_dependents("e").unwrap();
    assert!(!server.model_ready("e", None));
    assert!(!server.model_ready("a", None), "a was loaded only for e");

    // A member loaded on its own stays.
    let server = explicit(&dir, &["a", "e"]);
    server.unload_model_and_dependents("e").unwrap();
    assert!(server.model_ready("a", None));
}

#[tokio::test]
async fn polling_applies_added_modified_and_removed_models() {
    let dir = repo(&[("a/config.pbtxt", ID), ("a/1/", "")]);
    let server = server_with(&dir, |c| c.control_mode = ModelControlMode::Poll);
    let mut state = PollState::new(snapshot(&[dir.path().to_path_buf()], false));
    assert!(server.poll_repository(&mut state).is_empty());

    write(dir.path(), &[("b/config.pbtxt", ID), ("b/1/", "")]);
    let changes = server.poll_repository(&mut state);
    assert_eq!(changes.added, [id("b")]);
    infer(&server, request("b", None, &[1.0])).await.unwrap();

    let smaller = ID.replace("max_batch_size: 8", "max_batch_size: 2");
    write(dir.path(), &[("a/config.pbtxt", &smaller), ("a/2/", "")]);
    assert_eq!(server.poll_repository(&mut state).modified, [id("a")]);
    assert_eq!(server.model("a", None).unwrap().version(), 2);
    assert_eq!(server.model_config("a", None).unwrap().max_batch_size, 2);

    // A broken change leaves the loaded model serving.
    write(dir.path(), &[("a/config.pbtxt", "max_batch_size: oops")]);
    assert_eq!(server.poll_repository(&mut state).modified, [id("a")]);
    infer(&server, request("a", None, &[1.0])).await.unwrap();

    fs::remove_dir_all(dir.path().join("b")).unwrap();
    assert_eq!(server.poll_repository(&mut state).removed, [id("b")]);
    assert!(!server.model_ready("b", None));
}

/// A model of no namespace (namespacing off).
fn id(name: &str) -> ModelId {
    ModelId::new("", name)
}

fn warmup(inputs: &str) -> String {
    format!("{ID}\nmodel_warmup [ {{ name: \"w\" batch_size: 2 count: 3 inputs {inputs} }} ]\n")
}

#[test]
fn warmup_runs_before_ready_and_a_failing_sample_fails_the_load() {
    let good = warmup(
        r#"{ key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } }"#,
    );
    let missing_file = warmup(
        r#"{ key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "raw" } }"#,
    );
    let wrong_input =
        warmup(r#"{ key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 4 ] zero_data: true } }"#);
    let dir = repo(&[
        ("good/config.pbtxt", &good),
        ("good/1/", ""),
        ("file/config.pbtxt", &missing_file),
        ("file/1/", ""),
        ("wrong/config.pbtxt", &wrong_input),
        ("wrong/1/", ""),
    ]);
    let server = explicit(&dir, &["good"]);
    assert!(server.model_ready("good", None));
    assert_error(
        server.load_model("file"),
        ErrorKind::InvalidArg,
        &["warmup sample 'w'", "raw"],
    );
    assert_error(
        server.load_model("wrong"),
        ErrorKind::InvalidArg,
        &["warmup sample 'w'", "INPUT0", "INT32"],
    );
    // With the file (16 bytes: 4 FP32), the sample runs.
    write(dir.path(), &[("file/warmup/raw", "0123456789abcdef")]);
    server.load_model("file").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_under_traffic_drop_no_request() {
    let dir = repo(&[("a/config.pbtxt", &slow(2, 2)), ("a/1/", "")]);
    let server = explicit(&dir, &["a"]);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for i in 0..4 {
        let (server, stop, done) = (server.clone(), stop.clone(), done.clone());
        clients.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let response = infer(&server, request("a", None, &[i as f32])).await;
                assert_eq!(values(output(&response.unwrap(), "OUTPUT0")), [i as f32]);
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let reloader = server.clone();
    tokio::task::spawn_blocking(move || {
        for i in 0..20 {
            let delay = if i % 2 == 0 { 1 } else { 2 };
            write(dir.path(), &[("a/config.pbtxt", &slow(delay, 2))]);
            reloader.load_model("a").unwrap();
        }
    })
    .await
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    assert!(done.load(Ordering::Relaxed) > 20);
}
