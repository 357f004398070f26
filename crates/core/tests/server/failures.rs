//! Failed models and the repository index.

use crate::common::*;

#[tokio::test]
async fn failed_models_are_unavailable_while_others_serve() {
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

    // A configuration that does not parse keeps the model out of the
    // table, as in Triton: listed, with no state.
    let bad = rows(&index, "badconfig");
    assert_eq!(bad.len(), 1);
    assert_eq!((bad[0].state, bad[0].version), (None, None));

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
    let errors = server.load_startup_models().repository_errors;
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
