//! Model repositories on disk, read as Triton reads them.

use std::{fs, path::Path};

use oxiserve_core::repository::{RepositoryScan, ScanOptions, scan};
use tempfile::TempDir;

/// Writes `files` (path -> contents) under a new temporary folder.
fn repo(files: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new().unwrap();
    for (path, contents) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        if path.to_string_lossy().ends_with('/') {
            fs::create_dir_all(&path).unwrap();
        } else {
            fs::write(path, contents).unwrap();
        }
    }
    dir
}

const PY: &str = "backend: \"python\"\n";

fn scan_all(dirs: &[&Path], options: &ScanOptions) -> RepositoryScan {
    scan(
        &dirs.iter().map(|d| d.to_path_buf()).collect::<Vec<_>>(),
        options,
    )
}

/// name -> Ok(versions) or Err(joined messages)
fn summary(scan: &RepositoryScan) -> Vec<(String, Result<Vec<i64>, String>)> {
    scan.models
        .iter()
        .map(|m| {
            let outcome = match &m.outcome {
                Ok(spec) => Ok(spec.versions.iter().map(|v| v.version).collect()),
                Err(errors) => Err(oxiserve_config::join_errors(errors)),
            };
            (m.id.name.clone(), outcome)
        })
        .collect()
}

#[test]
fn version_folders_and_policies() {
    let dir = repo(&[
        ("a/config.pbtxt", PY),
        ("a/1/model.py", ""),
        ("a/3/model.py", ""),
        ("a/10/model.py", ""),
        ("a/01/model.py", ""),
        ("a/00/model.py", ""),
        ("a/v2/model.py", ""),
        ("a/notes.txt", ""),
        (
            "b/config.pbtxt",
            "backend: \"python\"\nversion_policy: { all { } }",
        ),
        ("b/1/model.py", ""),
        ("b/2/model.py", ""),
        (
            "c/config.pbtxt",
            "backend: \"python\"\nversion_policy: { specific { versions: [ 1, 3 ] } }",
        ),
        ("c/1/model.py", ""),
        ("c/2/model.py", ""),
        (
            "d/config.pbtxt",
            "backend: \"python\"\nversion_policy: { latest { num_versions: 2 } }",
        ),
        ("d/1/model.py", ""),
        ("d/2/model.py", ""),
        ("d/5/model.py", ""),
    ]);
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    assert_eq!(got[0], ("a".into(), Ok(vec![10])));
    assert_eq!(got[1], ("b".into(), Ok(vec![1, 2])));
    // A specific version without a folder is reported and the others serve, as in Triton.
    assert_eq!(got[2], ("c".into(), Ok(vec![1])));
    assert_eq!(got[3], ("d".into(), Ok(vec![2, 5])));
}

#[test]
fn version_zero_is_a_version() {
    let dir = repo(&[
        (
            "z/config.pbtxt",
            "backend: \"python\"\nversion_policy: { all { } }",
        ),
        ("z/0/model.py", ""),
        ("z/2/model.py", ""),
    ]);
    assert_eq!(
        summary(&scan_all(&[dir.path()], &ScanOptions::default())),
        [("z".into(), Ok(vec![0, 2]))]
    );
    let dir = repo(&[
        (
            "c/config.pbtxt",
            "backend: \"python\"\nversion_policy: { specific { versions: [ 3 ] } }",
        ),
        ("c/1/model.py", ""),
    ]);
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    let Err(message) = &got[0].1 else {
        panic!("{got:?}")
    };
    assert!(message.ends_with("c/config.pbtxt:2:1: version_policy: no version to serve: the model folder has no version folder (a number such as '1') that the version policy selects (found: 1)"), "{message}");
}

#[test]
fn model_files_per_platform_and_custom_names() {
    let dir = repo(&[
        ("onnx/config.pbtxt", "platform: \"onnxruntime_onnx\""),
        ("onnx/1/model.onnx", ""),
        ("torch/config.pbtxt", "platform: \"pytorch_libtorch\""),
        ("torch/1/model.pt", ""),
        (
            "named/config.pbtxt",
            "backend: \"onnxruntime\"\ndefault_model_filename: \"net.onnx\"",
        ),
        ("named/1/net.onnx", ""),
        ("saved/1/model.savedmodel/saved_model.pb", ""),
        ("plan/1/model.plan", ""),
        ("missing/config.pbtxt", "backend: \"onnxruntime\""),
        ("missing/1/other.onnx", ""),
        (
            "ens/config.pbtxt",
            "platform: \"ensemble\"\ninput { name: \"I\" data_type: TYPE_FP32 dims: 1 }\noutput { name: \"O\" data_type: TYPE_FP32 dims: 1 }\nensemble_scheduling { step { model_name: \"onnx\" input_map { key: \"x\" value: \"I\" } output_map { key: \"y\" value: \"O\" } } }",
        ),
        ("ens/1/", ""),
    ]);
    let scan = scan_all(
        &[dir.path()],
        &ScanOptions {
            auto_complete: true,
            ..Default::default()
        },
    );
    let by_name = |n: &str| scan.models.iter().find(|m| m.id.name == n).unwrap();
    for (name, file) in [
        ("onnx", "model.onnx"),
        ("torch", "model.pt"),
        ("named", "net.onnx"),
        ("saved", "model.savedmodel"),
        ("plan", "model.plan"),
    ] {
        let spec = by_name(name)
            .outcome
            .as_ref()
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(
            spec.versions[0]
                .model_file
                .as_ref()
                .unwrap()
                .file_name()
                .unwrap(),
            file,
            "{name}"
        );
    }
    let errors = by_name("missing").outcome.as_ref().unwrap_err();
    assert!(
        errors[0]
            .to_string()
            .contains("version 1 has no model file: ")
            && errors[0]
                .to_string()
                .contains("missing/1/model.onnx does not exist"),
        "{errors:?}"
    );
    // The ensemble's member `onnx` has no declared inputs, so the step's names are unknown.
    let errors = oxiserve_config::join_errors(by_name("ens").outcome.as_ref().unwrap_err());
    assert!(errors.contains("model 'onnx' has no input 'x'"), "{errors}");
}

#[test]
fn missing_config_needs_auto_complete() {
    let dir = repo(&[("m/1/model.py", "")]);
    let strict = scan_all(
        &[dir.path()],
        &ScanOptions {
            auto_complete: false,
            ..Default::default()
        },
    );
    let errors = oxiserve_config::join_errors(strict.models[0].outcome.as_ref().unwrap_err());
    assert!(errors.contains("m/config.pbtxt: config.pbtxt is missing; write one, or start with --strict-model-config=false"), "{errors}");
    let lenient = scan_all(
        &[dir.path()],
        &ScanOptions {
            auto_complete: true,
            ..Default::default()
        },
    );
    let spec = lenient.models[0].outcome.as_ref().unwrap();
    assert_eq!(
        (spec.config.backend.as_str(), spec.config.name.as_str()),
        ("python", "m")
    );
}

#[test]
fn one_bad_model_does_not_stop_the_others() {
    let dir = repo(&[
        (
            "bad/config.pbtxt",
            "backend: \"python\"\nmax_batch_size: eight",
        ),
        ("bad/1/model.py", ""),
        ("good/config.pbtxt", PY),
        ("good/1/model.py", ""),
        (".ipynb_checkpoints/x", ""),
        ("README.md", "not a model"),
    ]);
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    assert_eq!(got.len(), 2, "{got:?}");
    let Err(message) = &got[0].1 else { panic!() };
    assert!(
        message.ends_with(
            "bad/config.pbtxt:2:17: field 'max_batch_size' expects an integer (int32), found eight"
        ),
        "{message}"
    );
    assert_eq!(got[1], ("good".into(), Ok(vec![1])));
}

#[test]
fn same_model_in_two_repositories_is_an_error() {
    let first = repo(&[
        ("m/config.pbtxt", PY),
        ("m/1/model.py", ""),
        ("only_first/config.pbtxt", PY),
        ("only_first/1/model.py", ""),
    ]);
    let second = repo(&[("m/config.pbtxt", PY), ("m/1/model.py", "")]);
    let got = summary(&scan_all(
        &[first.path(), second.path()],
        &ScanOptions::default(),
    ));
    let Err(message) = &got[0].1 else {
        panic!("{got:?}")
    };
    assert!(
        message.starts_with("model 'm' exists in more than one model repository: "),
        "{message}"
    );
    assert_eq!(got[1], ("only_first".into(), Ok(vec![1])));
}

#[test]
fn with_namespacing_each_repository_keeps_its_copy_and_its_ensembles_check_it() {
    // The copies differ in their output's name; each ensemble maps the one
    // of the copy in its own repository.
    let copy = |output: &str| {
        format!(
            "backend: \"python\"\ninput [ {{ name: \"I\" data_type: TYPE_FP32 dims: [ 1 ] }} ]\n\
             output [ {{ name: \"{output}\" data_type: TYPE_FP32 dims: [ 1 ] }} ]\n"
        )
    };
    let ensemble = |output: &str| {
        format!(
            "platform: \"ensemble\"\n\
             input [ {{ name: \"IN\" data_type: TYPE_FP32 dims: [ 1 ] }} ]\n\
             output [ {{ name: \"OUT\" data_type: TYPE_FP32 dims: [ 1 ] }} ]\n\
             ensemble_scheduling {{ step [ {{ model_name: \"m\" model_version: -1 \
             input_map {{ key: \"I\" value: \"IN\" }} output_map {{ key: \"{output}\" value: \"OUT\" }} }} ] }}\n"
        )
    };
    let (copy_a, copy_b) = (copy("A"), copy("B"));
    let (ensemble_a, ensemble_b) = (ensemble("A"), ensemble("B"));
    let first = repo(&[
        ("m/config.pbtxt", &copy_a),
        ("m/1/model.py", ""),
        ("e/config.pbtxt", &ensemble_a),
        ("e/1/", ""),
    ]);
    let second = repo(&[
        ("m/config.pbtxt", &copy_b),
        ("m/1/model.py", ""),
        ("f/config.pbtxt", &ensemble_b),
        ("f/1/", ""),
    ]);
    let options = ScanOptions {
        namespacing: true,
        ..Default::default()
    };
    let scan = scan_all(&[first.path(), second.path()], &options);
    let ids: Vec<(String, String)> = scan
        .models
        .iter()
        .map(|m| (m.id.namespace.clone(), m.id.name.clone()))
        .collect();
    let (a, b) = (
        first.path().display().to_string(),
        second.path().display().to_string(),
    );
    let mut expected = vec![
        (a.clone(), "e".to_string()),
        (a, "m".to_string()),
        (b.clone(), "f".to_string()),
        (b, "m".to_string()),
    ];
    expected.sort();
    assert_eq!(ids, expected);
    for model in &scan.models {
        assert!(model.outcome.is_ok(), "{}: {:?}", model.id, model.outcome);
    }
}

#[test]
fn missing_repository_is_reported() {
    let got = scan_all(&[Path::new("/nonexistent/models")], &ScanOptions::default());
    assert_eq!(got.repository_errors.len(), 1);
    assert!(
        got.repository_errors[0].starts_with("cannot read model repository '/nonexistent/models'"),
        "{:?}",
        got.repository_errors
    );
}

#[test]
fn explicit_mode_reads_only_named_models() {
    let dir = repo(&[
        ("alpha/config.pbtxt", PY),
        ("alpha/1/model.py", ""),
        ("beta/config.pbtxt", PY),
        ("beta/1/model.py", ""),
    ]);
    let options = ScanOptions {
        only: Some(vec!["beta".into(), "alpah".into()]),
        ..Default::default()
    };
    let got = summary(&scan_all(&[dir.path()], &options));
    assert_eq!(
        got[0],
        (
            "alpah".into(),
            Err("model not found in any model repository; did you mean 'alpha'?".into())
        )
    );
    assert_eq!(got[1], ("beta".into(), Ok(vec![1])));
    let all = ScanOptions {
        only: Some(vec!["*".into()]),
        ..Default::default()
    };
    assert_eq!(summary(&scan_all(&[dir.path()], &all)).len(), 2);
}

#[test]
fn label_files_must_exist() {
    let dir = repo(&[
        (
            "m/config.pbtxt",
            "backend: \"python\"\noutput { name: \"O\" data_type: TYPE_FP32 dims: 3 label_filename: \"labels.txt\" }",
        ),
        ("m/1/model.py", ""),
    ]);
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    let Err(message) = &got[0].1 else { panic!() };
    assert!(message.contains("m/config.pbtxt:2:49: output[0].label_filename: label file 'labels.txt' is not in the model folder"), "{message}");
    fs::write(dir.path().join("m/labels.txt"), "a\nb\nc\n").unwrap();
    assert_eq!(
        summary(&scan_all(&[dir.path()], &ScanOptions::default()))[0].1,
        Ok(vec![1])
    );
}

#[test]
fn ensembles_are_checked_against_members() {
    let member = "backend: \"python\"\nmax_batch_size: 4\ninput { name: \"text\" data_type: TYPE_STRING dims: 1 }\noutput { name: \"ids\" data_type: TYPE_INT64 dims: -1 }";
    let ensemble = "platform: \"ensemble\"\nmax_batch_size: 4\ninput { name: \"T\" data_type: TYPE_STRING dims: 1 }\noutput { name: \"I\" data_type: TYPE_INT64 dims: -1 }\nensemble_scheduling { step { model_name: \"tok\" model_version: -1 input_map { key: \"text\" value: \"T\" } output_map { key: \"ids\" value: \"I\" } } }";
    let dir = repo(&[
        ("tok/config.pbtxt", member),
        ("tok/1/model.py", ""),
        ("pipe/config.pbtxt", ensemble),
        ("pipe/1/", ""),
    ]);
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    assert_eq!(
        got,
        [("pipe".into(), Ok(vec![1])), ("tok".into(), Ok(vec![1]))]
    );

    // A member that fails takes its ensemble down with a reason.
    fs::write(
        dir.path().join("tok/config.pbtxt"),
        "backend: \"python\"\nmax_batch_size: -1",
    )
    .unwrap();
    let got = summary(&scan_all(&[dir.path()], &ScanOptions::default()));
    let Err(message) = &got[0].1 else {
        panic!("{got:?}")
    };
    assert!(
        message.contains("pipe/config.pbtxt: member model 'tok' failed to load"),
        "{message}"
    );
}
