//! Model control.

use crate::common::*;

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
    // A configuration that does not parse fails the poll, as in Triton.
    assert_error(
        server.load_model("bad"),
        ErrorKind::Internal,
        &[
            "failed to load 'bad', failed to poll from model repository",
            "banana",
        ],
    );
    assert_error(
        server.load_model("nobackend"),
        ErrorKind::InvalidArg,
        &["'nobackend'", "nosuch"],
    );
    let index = server.repository_index(false);
    assert_eq!(rows(&index, "bad")[0].state, None);
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
