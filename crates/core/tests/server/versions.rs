//! Versions and lookup errors.

use crate::common::*;

/// Versions 1 and 2 of a model served with the `all` policy and, when
/// `broken`, a version 3 that fails to load.
fn versioned(broken: bool) -> TempDir {
    let config = r#"
backend: "flaky"
max_batch_size: 8
version_policy: { all { } }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"#;
    let mut files = vec![("v/config.pbtxt", config), ("v/1/", ""), ("v/2/", "")];
    if broken {
        files.push(("v/3/broken", ""));
    }
    repo(&files)
}

#[tokio::test]
async fn highest_ready_version_serves_when_none_is_asked() {
    let dir = versioned(false);
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

/// Triton's ModelLifeCycle::OnLoadFinal: when a version fails, the versions
/// that loaded with it are unloaded, so the model is unavailable as a whole.
#[tokio::test]
async fn a_failed_version_makes_the_whole_model_unavailable() {
    let dir = versioned(true);
    let server = server(&dir);
    let index = server.repository_index(false);
    let v: Vec<_> = rows(&index, "v")
        .into_iter()
        .map(|e| (e.version, e.state, e.reason.as_str()))
        .collect();
    assert_eq!(
        v[..2],
        [
            (Some(1), Some(ModelState::Unavailable), "unloaded"),
            (Some(2), Some(ModelState::Unavailable), "unloaded"),
        ]
    );
    assert_eq!(v[2].1, Some(ModelState::Unavailable));
    assert!(v[2].2.contains("broken on purpose"), "{v:?}");
    assert!(!server.model_ready("v", Some(1)));
    assert!(rows(&server.repository_index(true), "v").is_empty());
}

#[tokio::test]
async fn lookup_errors_and_their_kinds() {
    let dir = versioned(true);
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
    let dir = versioned(true);
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
