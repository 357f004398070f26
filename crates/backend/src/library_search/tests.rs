use std::fs;

use super::*;

/// A runtime whose versioned library sits in `runtime/capi` of its wheel.
const VERSIONED: LibrarySearch = LibrarySearch {
    runtime: "Runtime",
    backend: "runtime",
    env_var: Some("OXI_TEST_RUNTIME_LIBRARY"),
    wheel: "runtime==1.2.3",
    wheel_folder: "runtime/capi",
    wheel_file: "libruntime.so.1.2.3",
    file: LibraryFile::Prefix("libruntime.so"),
    more_system_folders: &[],
};

/// A runtime with two library names, the first preferred.
const NAMED: LibrarySearch = LibrarySearch {
    runtime: "Named",
    backend: "named",
    env_var: None,
    wheel: "named==2.0",
    wheel_folder: "named",
    wheel_file: "libnamed_cc.so.2",
    file: LibraryFile::Names(&["libnamed_cc.so.2", "libnamed.so.2"]),
    more_system_folders: &["/nonexistent/named/lib"],
};

#[test]
fn finds_the_wheel_in_an_ancestor_venv() {
    let root = tempfile::tempdir().unwrap();
    let capi = root
        .path()
        .join(".venv/lib/python3.11/site-packages/runtime/capi");
    fs::create_dir_all(&capi).unwrap();
    fs::write(capi.join("libruntime.so.1.2.3"), b"").unwrap();
    fs::write(capi.join("libruntime_providers_shared.so"), b"").unwrap();
    let exe_dir = root.path().join("target/release");
    fs::create_dir_all(&exe_dir).unwrap();
    assert_eq!(
        VERSIONED.beside_binary(&exe_dir.join("oxiserve")),
        Some(capi.join("libruntime.so.1.2.3"))
    );
}

#[test]
fn finds_the_wheel_of_the_venv_the_binary_is_installed_in() {
    let venv = tempfile::tempdir().unwrap();
    let package = venv.path().join("lib/python3.12/dist-packages/named");
    fs::create_dir_all(&package).unwrap();
    fs::create_dir_all(venv.path().join("bin")).unwrap();
    fs::write(package.join("libnamed_cc.so.2"), b"").unwrap();
    assert_eq!(
        NAMED.beside_binary(&venv.path().join("bin/oxiserve")),
        Some(package.join("libnamed_cc.so.2"))
    );
}

#[test]
fn a_library_beside_the_binary_comes_first() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("libruntime.so.1.2.3"), b"").unwrap();
    let venv = root
        .path()
        .join(".venv/lib/python3.11/site-packages/runtime/capi");
    fs::create_dir_all(&venv).unwrap();
    fs::write(venv.join("libruntime.so.1.2.3"), b"").unwrap();
    assert_eq!(
        VERSIONED.beside_binary(&root.path().join("oxiserve")),
        Some(root.path().join("libruntime.so.1.2.3"))
    );
}

#[test]
fn the_highest_version_of_a_prefix_wins() {
    let root = tempfile::tempdir().unwrap();
    for name in [
        "libruntime.so.1.2.3",
        "libruntime.so.1.3.0",
        "libruntime.so",
    ] {
        fs::write(root.path().join(name), b"").unwrap();
    }
    assert_eq!(
        VERSIONED.beside_binary(&root.path().join("oxiserve")),
        Some(root.path().join("libruntime.so.1.3.0"))
    );
}

#[test]
fn the_first_name_wins_and_names_match_exactly() {
    let root = tempfile::tempdir().unwrap();
    let exe = root.path().join("oxiserve");
    fs::write(root.path().join("libnamed.so.2.1"), b"").unwrap();
    assert_eq!(NAMED.beside_binary(&exe), None);
    fs::write(root.path().join("libnamed.so.2"), b"").unwrap();
    assert_eq!(
        NAMED.beside_binary(&exe),
        Some(root.path().join("libnamed.so.2"))
    );
    fs::write(root.path().join("libnamed_cc.so.2"), b"").unwrap();
    assert_eq!(
        NAMED.beside_binary(&exe),
        Some(root.path().join("libnamed_cc.so.2"))
    );
}

#[test]
fn a_named_library_must_exist() {
    let error = NAMED
        .find(Some(Path::new("/nonexistent/libnamed_cc.so.2")))
        .unwrap_err();
    assert_eq!(
        error,
        "Named library not found: --backend-config=named,library-path names \
         /nonexistent/libnamed_cc.so.2, which does not exist"
    );
}

#[test]
fn not_found_says_how_to_install_the_library() {
    assert_eq!(
        VERSIONED.find(None).unwrap_err(),
        "Runtime library not found: install the runtime==1.2.3 wheel (scripts/python-env.sh puts \
         it in the checkout's .venv, where oxiserve finds it), or set OXI_TEST_RUNTIME_LIBRARY or \
         --backend-config=runtime,library-path to its runtime/capi/libruntime.so.1.2.3"
    );
    assert!(
        NAMED
            .find(None)
            .unwrap_err()
            .ends_with("or set --backend-config=named,library-path to its named/libnamed_cc.so.2")
    );
}
