//! The real `oxiserve` binary, run as a user runs it.

use std::{
    fs,
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Output, Stdio},
    sync::mpsc,
    thread,
    time::Duration,
};

use tempfile::TempDir;

fn oxiserve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxiserve"))
        .args(args)
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A repository with one valid Python model and one broken config.
fn repository() -> TempDir {
    let dir = TempDir::new().unwrap();
    let write = |path: &str, contents: &str| {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    };
    write(
        "good/config.pbtxt",
        "backend: \"custom\"\nmax_batch_size: 4\ninput { name: \"I\" data_type: TYPE_FP32 dims: 2 }\noutput { name: \"O\" data_type: TYPE_FP32 dims: 2 }",
    );
    write("good/1/.keep", "");
    write("good/2/.keep", "");
    write(
        "bad/config.pbtxt",
        "backend: \"python\"\ninput { name: \"I\" data_type: TYPE_FP23 dims: 2 }",
    );
    write("bad/1/model.py", "");
    dir
}

fn path(dir: &TempDir) -> String {
    dir.path().to_string_lossy().into_owned()
}

#[test]
fn validate_reports_every_problem_with_its_location() {
    let repo = repository();
    let out = oxiserve(&["validate", &path(&repo)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bad = format!(
        "error: bad: {}/bad/config.pbtxt:2:30: unknown value 'TYPE_FP23' for field 'data_type' (enum inference.DataType); did you mean 'TYPE_FP32'?",
        path(&repo)
    );
    assert!(stdout.contains(&bad), "{stdout}");
    // Neither built in nor a library in the backend directory or the model's folders.
    assert!(
        stdout.contains(
            "error: good: version 2: unable to find backend library for backend 'custom', try \
             specifying runtime on the model configuration."
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 model(s) checked, 2 problem(s)\n"),
        "{stdout}"
    );

    fs::remove_dir_all(repo.path().join("bad")).unwrap();
    fs::write(
        repo.path().join("good/config.pbtxt"),
        "backend: \"identity\"\nmax_batch_size: 4\ninput { name: \"INPUT0\" data_type: TYPE_FP32 dims: 2 }\noutput { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: 2 }",
    )
    .unwrap();
    let out = oxiserve(&["validate", &path(&repo)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ok: good (identity, version 2)"),
        "{}",
        text(&out)
    );
}

#[test]
fn validate_the_example_repository() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/model_repository");
    let out = oxiserve(&["validate", examples.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn start_up_prints_the_model_and_option_tables() {
    let repo = repository();
    let out = oxiserve(&[
        "--model-repository",
        &path(&repo),
        "--reuse-http-port=true",
        "--grpc-port",
        "9001",
        "--grpc-keepalive-permit-without-calls=true",
    ]);
    let all = text(&out);
    // Triton exits when a model fails and --exit-on-error is true (the default).
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("| Model | Version | Status"), "{all}");
    // As Triton, a configuration that does not parse keeps the model out
    // of the table, with a log line naming the file, line and column.
    assert!(
        all.contains("Poll failed for model directory 'bad': ")
            && all.contains("bad/config.pbtxt:2:30: unknown value 'TYPE_FP23'")
            && !all.contains("| bad "),
        "{all}"
    );
    // No built-in backend and no library: Triton's words.
    assert!(
        all.contains(
            "| good  | 2       | UNAVAILABLE: unable to find backend library for backend 'custom', \
             try specifying runtime on the model configuration."
        ),
        "{all}"
    );
    assert!(
        all.contains("| model_control_mode               | MODE_NONE"),
        "{all}"
    );
    assert!(
        all.contains("--reuse-http-port: not supported yet (ignored)"),
        "{all}"
    );
    assert!(
        all.contains("--grpc-keepalive-permit-without-calls: no effect in this build")
            && !all.contains("--grpc-port: no effect"),
        "{all}"
    );
    assert!(
        all.contains("error: creating server: failed to load all models"),
        "{all}"
    );
}

#[test]
fn without_exit_on_error_the_server_keeps_running() {
    let repo = repository();
    let mut child = Command::new(env!("CARGO_BIN_EXE_oxiserve"))
        .args([
            "--model-repository",
            &path(&repo),
            "--exit-on-error=false",
            "--http-port=0",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let serving = rx
        .iter()
        .find(|l| l.contains("Started HTTPService at 0.0.0.0:"));
    assert!(serving.is_some());
    thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "the server exited");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn explicit_mode_reads_only_the_requested_models() {
    let repo = repository();
    let out = oxiserve(&[
        "--model-repository",
        &path(&repo),
        "--model-control-mode=explicit",
        "--load-model=good",
        "--log-format=ISO8601",
    ]);
    let all = text(&out);
    // The default version policy serves only the latest version.
    assert!(
        all.contains("| good  | 2       |") && !all.contains("| good  | 1 "),
        "{all}"
    );
    assert!(!all.contains("| bad "), "{all}");
    assert!(all.contains("MODE_EXPLICIT"), "{all}");
    assert!(
        all.lines()
            .any(|l| l.len() > 21 && &l[4..5] == "-" && &l[19..22] == "Z I"),
        "{all}"
    );
}

#[test]
fn log_file_receives_the_log() {
    let repo = repository();
    let log = repo.path().join("server.log");
    let out = oxiserve(&[
        "--model-repository",
        &path(&repo),
        "--log-file",
        log.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let logged = fs::read_to_string(&log).unwrap();
    assert!(logged.contains("| Model | Version | Status"), "{logged}");
    assert!(!text(&out).contains("| Model"), "{}", text(&out));
}

#[test]
fn command_line_errors() {
    let out = oxiserve(&["--model-repositry=/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--model-repository"), "{}", text(&out));
    let out = oxiserve(&["--http-port=80a", "--model-repository=/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--http-port"), "{}", text(&out));
    let out = oxiserve(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("--model-repository must be specified"),
        "{}",
        text(&out)
    );
}

#[test]
fn unreadable_repository_stops_start_up() {
    // (With --exit-on-error=false the server serves on, neither live nor
    // ready, as Triton: tests/management/test_exit_on_error.py.)
    let out = oxiserve(&["--model-repository=/nonexistent/repo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("cannot read model repository '/nonexistent/repo'"),
        "{}",
        text(&out)
    );
}
