//! `--model-namespacing`: models of one name in two repositories served side
//! by side, a name held by two of them ambiguous, each ensemble's steps
//! resolved in its own repository first, and the copies followed as they
//! come and go (Triton's L0_model_namespacing checks).

use std::path::PathBuf;

use oxiserve_core::repository::{ModelId, PollState, snapshot};

use super::common::*;

/// An ensemble of one step on "composing" (IN -> OUT).
const ENSEMBLE: &str = r#"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ -1 ] } ]
ensemble_scheduling { step [ {
  model_name: "composing" model_version: -1
  input_map { key: "INPUT0" value: "IN" }
  output_map { key: "OUTPUT0" value: "OUT" }
} ] }
"#;

/// Repository A: composing and ens_a on it; repository B: composing and
/// ens_b on it.
fn repositories() -> (TempDir, TempDir) {
    let a = repo(&[
        ("composing/config.pbtxt", ID),
        ("composing/1/", ""),
        ("ens_a/config.pbtxt", ENSEMBLE),
        ("ens_a/1/", ""),
    ]);
    let b = repo(&[
        ("composing/config.pbtxt", ID),
        ("composing/1/", ""),
        ("ens_b/config.pbtxt", ENSEMBLE),
        ("ens_b/1/", ""),
    ]);
    (a, b)
}

fn namespaced(a: &TempDir, b: &TempDir, mode: ModelControlMode, startup: &[&str]) -> Server {
    server_with(a, |c| {
        c.repositories.push(b.path().to_path_buf());
        c.model_namespacing = true;
        c.control_mode = mode;
        c.startup_models = startup.iter().map(|s| s.to_string()).collect();
    })
}

fn namespace(dir: &TempDir) -> String {
    dir.path().display().to_string()
}

async fn run(server: &Server, model: &str) -> Result<InferResponse> {
    let request = InferRequest {
        model_name: model.into(),
        inputs: vec![fp32("IN", &[1, 2], &[1.0, 2.0])],
        ..Default::default()
    };
    infer(server, request).await
}

/// How many requests the copy of "composing" in `dir`'s repository served,
/// once they are all counted.
fn served_by(server: &Server, dir: &TempDir, at_least: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let count: u64 = server
            .loaded_models()
            .iter()
            .filter(|m| m.name() == "composing" && m.namespace() == Some(&namespace(dir)))
            .map(|m| m.statistics().inference_stats.success.count)
            .sum();
        if count >= at_least || Instant::now() > deadline {
            return count;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ambiguous(server: &Server, name: &str) {
    assert_error(
        server.model(name, None),
        ErrorKind::InvalidArg,
        &[&format!(
            "There are 2 identifiers of model '{name}' in global map, model namespace must be \
             provided to resolve ambiguity."
        )],
    );
}

#[tokio::test]
async fn each_ensemble_runs_the_copy_in_its_own_repository() {
    let (a, b) = repositories();
    let server = namespaced(&a, &b, ModelControlMode::None, &[]);
    assert!(server.is_ready());
    ambiguous(&server, "composing");
    assert!(!server.model_ready("composing", None));

    run(&server, "ens_a").await.unwrap();
    assert_eq!(
        (served_by(&server, &a, 1), served_by(&server, &b, 0)),
        (1, 0)
    );
    run(&server, "ens_b").await.unwrap();
    assert_eq!(
        (served_by(&server, &a, 1), served_by(&server, &b, 1)),
        (1, 1)
    );

    // As Triton: the step names the namespace it was bound to.
    let config = server.model_config("ens_a", None).unwrap();
    let json = oxiserve_config::to_json(&config);
    assert_eq!(
        json["ensemble_scheduling"]["step"][0]["model_namespace"],
        namespace(&a)
    );
    // The index lists both copies, by repository.
    let index = server.repository_index(true);
    let names: Vec<&str> = index.iter().map(|e| e.name.as_str()).collect();
    let (first, second) = match namespace(&a) < namespace(&b) {
        true => ("ens_a", "ens_b"),
        false => ("ens_b", "ens_a"),
    };
    assert_eq!(names, ["composing", first, "composing", second]);
    // Statistics by name: an ambiguous name is not available, as in Triton.
    assert_error(
        server.statistics(Some("composing"), None),
        ErrorKind::InvalidArg,
        &["requested model 'composing' is not available"],
    );
}

#[tokio::test]
async fn without_namespacing_the_copies_are_taken_out() {
    let (a, b) = repositories();
    let server = server_with(&a, |c| c.repositories.push(b.path().to_path_buf()));
    assert!(!server.model_ready("composing", None));
    assert!(run(&server, "ens_a").await.is_err());
    assert_error(
        server.model("nothing", None),
        ErrorKind::NotFound,
        &["Request for unknown model: 'nothing' is not found"],
    );
}

#[tokio::test]
async fn polling_follows_a_copy_that_goes_and_comes_back() {
    let (a, b) = repositories();
    let server = namespaced(&a, &b, ModelControlMode::Poll, &[]);
    let repositories: Vec<PathBuf> = vec![a.path().to_path_buf(), b.path().to_path_buf()];
    let mut state = PollState::new(snapshot(&repositories, true));

    // A's copy goes: both ensembles run B's, which the name now finds.
    let away = TempDir::new().unwrap();
    fs::rename(a.path().join("composing"), away.path().join("composing")).unwrap();
    let changes = server.poll_repository(&mut state);
    assert_eq!(changes.removed, [ModelId::new(namespace(&a), "composing")]);
    run(&server, "ens_a").await.unwrap();
    run(&server, "ens_b").await.unwrap();
    assert_eq!(served_by(&server, &b, 2), 2);
    assert!(server.model_ready("composing", None));
    let config = server.model_config("ens_a", None).unwrap();
    let step = &oxiserve_config::to_json(&config)["ensemble_scheduling"]["step"][0];
    assert_eq!(step["model_namespace"], namespace(&b));

    // It comes back: ens_a runs it again, and the name is ambiguous again.
    fs::rename(away.path().join("composing"), a.path().join("composing")).unwrap();
    let changes = server.poll_repository(&mut state);
    assert_eq!(changes.added, [ModelId::new(namespace(&a), "composing")]);
    run(&server, "ens_a").await.unwrap();
    assert_eq!(served_by(&server, &a, 1), 1);
    ambiguous(&server, "composing");
}

#[tokio::test]
async fn explicit_load_and_unload_act_on_every_copy() {
    let (a, b) = repositories();
    let server = namespaced(&a, &b, ModelControlMode::Explicit, &[]);
    assert_error(
        server.model("composing", None),
        ErrorKind::InvalidArg,
        &["Request for unknown model: 'composing' is not found"],
    );
    // Loading an ensemble loads every copy of its step's name.
    server.load_model("ens_b").unwrap();
    ambiguous(&server, "composing");
    run(&server, "ens_b").await.unwrap();
    assert_eq!(served_by(&server, &b, 1), 1);

    server.unload_model("composing").unwrap();
    assert_error(
        server.model("composing", None),
        ErrorKind::NotFound,
        &["Identifier of model 'composing' is not found in global map"],
    );
    assert!(!server.model_ready("ens_b", None), "its step was unloaded");

    server.load_model("composing").unwrap();
    ambiguous(&server, "composing");
    assert!(server.model_ready("ens_b", None), "back with its step");
    assert!(!server.model_ready("ens_a", None), "never loaded");
}

#[tokio::test]
async fn an_ensemble_in_a_third_repository_finds_no_single_copy() {
    let (a, b) = repositories();
    let c = repo(&[("ens_c/config.pbtxt", ENSEMBLE), ("ens_c/1/", "")]);
    let server = server_with(&a, |config| {
        config.repositories.push(b.path().to_path_buf());
        config.repositories.push(c.path().to_path_buf());
        config.model_namespacing = true;
        config.control_mode = ModelControlMode::Explicit;
    });
    let expected = format!(
        "load failed for model '{}::ens_c': ensemble {}::ens_c contains models that are not \
         available or ambiguous: composing",
        namespace(&c),
        namespace(&c)
    );
    assert_error(
        server.load_model("ens_c"),
        ErrorKind::InvalidArg,
        &[&expected],
    );
    assert!(!server.model_ready("ens_c", None));
}
