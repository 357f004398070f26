//! Finding and loading the ONNX Runtime library, once per process.
//!
//! First match wins:
//! 1. `--backend-config=onnxruntime,library-path=PATH`;
//! 2. the `ORT_DYLIB_PATH` environment variable (the `ort` crate's own);
//! 3. beside the binary: `<exe dir>/libonnxruntime.so*`, then the `onnxruntime`
//!    wheel in the Python environment whose `bin/` holds the binary (`pip
//!    install oxiserve` puts it there), then in the nearest `.venv` of the
//!    binary's ancestor folders (a source checkout, where
//!    `scripts/python-env.sh` installs it);
//! 4. `libonnxruntime.so` on the system's library path.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::OnceLock,
};

use ort::environment::{Environment, GlobalThreadPoolOptions};

use crate::settings::OnnxSettings;

/// The wheel whose library this build is tested with.
pub(crate) const WHEEL: &str = "onnxruntime==1.31.1";

/// ONNX Runtime allows one environment per process; the first settings win.
static ENVIRONMENT: OnceLock<Result<Environment, String>> = OnceLock::new();

/// The process's ONNX Runtime environment, started on first use.
pub(crate) fn environment(settings: &OnnxSettings) -> Result<&'static Environment, String> {
    ENVIRONMENT
        .get_or_init(|| start(settings))
        .as_ref()
        .map_err(Clone::clone)
}

/// Loads the library and creates the ONNX Runtime environment.
fn start(settings: &OnnxSettings) -> Result<Environment, String> {
    let library = find(settings)?;
    let builder = ort::init_from(&library).map_err(|e| {
        format!(
            "ONNX Runtime library {} could not be loaded: {e}; install {WHEEL} \
             (scripts/python-env.sh does) or point ORT_DYLIB_PATH at its libonnxruntime.so",
            library.display()
        )
    })?;
    let mut builder = builder.with_name("oxiserve").with_telemetry(false);
    if settings.global_thread_pool {
        builder =
            builder.with_global_thread_pool(global_pool(settings).map_err(|e| e.to_string())?);
    }
    let environment = builder
        .build()
        .map_err(|e| format!("ONNX Runtime could not start: {e}"))?;
    log::info!("onnxruntime backend: loaded {}", library.display());
    Ok(environment)
}

fn global_pool(settings: &OnnxSettings) -> ort::Result<GlobalThreadPoolOptions> {
    let mut pool = GlobalThreadPoolOptions::default();
    if let Some(n) = settings.intra_op_threads {
        pool = pool.with_intra_threads(n)?;
    }
    if let Some(n) = settings.inter_op_threads {
        pool = pool.with_inter_threads(n)?;
    }
    Ok(pool)
}

/// The library to load, or a message saying how to install one.
fn find(settings: &OnnxSettings) -> Result<PathBuf, String> {
    if let Some(path) = &settings.library_path {
        return existing(path, "--backend-config=onnxruntime,library-path");
    }
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return existing(Path::new(&path), "ORT_DYLIB_PATH");
    }
    let exe = std::env::current_exe().ok();
    if let Some(found) = exe.as_deref().and_then(beside_binary) {
        return Ok(found);
    }
    if let Some(found) = on_system() {
        return Ok(found);
    }
    Err(format!(
        "ONNX Runtime library not found: install the {WHEEL} wheel (scripts/python-env.sh \
         puts it in the checkout's .venv, where oxiserve finds it), or set ORT_DYLIB_PATH or \
         --backend-config=onnxruntime,library-path to its onnxruntime/capi/libonnxruntime.so.1.31.1"
    ))
}

fn existing(path: &Path, origin: &str) -> Result<PathBuf, String> {
    if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(format!(
            "ONNX Runtime library not found: {origin} names {}, which does not exist",
            path.display()
        ))
    }
}

fn beside_binary(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    if let Some(found) = library_in(dir) {
        return Some(found);
    }
    if let Some(found) = dir.parent().and_then(wheel_in) {
        return Some(found);
    }
    dir.ancestors()
        .find_map(|folder| wheel_in(&folder.join(".venv")))
}

/// The `onnxruntime` wheel's library in the Python environment or
/// installation at `prefix`: `lib/python3.*/{site,dist}-packages/onnxruntime/capi`.
fn wheel_in(prefix: &Path) -> Option<PathBuf> {
    let pythons = fs::read_dir(prefix.join("lib")).ok()?;
    pythons.flatten().find_map(|python| {
        ["site-packages", "dist-packages"]
            .iter()
            .find_map(|packages| library_in(&python.path().join(packages).join("onnxruntime/capi")))
    })
}

/// `libonnxruntime.so*` in `dir`, the highest version first.
fn library_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libonnxruntime.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

fn on_system() -> Option<PathBuf> {
    [
        "/usr/local/lib",
        "/usr/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
    ]
    .iter()
    .find_map(|dir| library_in(Path::new(dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_wheel_in_an_ancestor_venv() {
        let root = tempfile::tempdir().unwrap();
        let capi = root
            .path()
            .join(".venv/lib/python3.11/site-packages/onnxruntime/capi");
        fs::create_dir_all(&capi).unwrap();
        fs::write(capi.join("libonnxruntime.so.1.31.1"), b"").unwrap();
        fs::write(capi.join("libonnxruntime_providers_shared.so"), b"").unwrap();
        let exe_dir = root.path().join("target/release");
        fs::create_dir_all(&exe_dir).unwrap();
        assert_eq!(
            beside_binary(&exe_dir.join("oxiserve")),
            Some(capi.join("libonnxruntime.so.1.31.1"))
        );
    }

    #[test]
    fn finds_the_wheel_of_the_venv_the_binary_is_installed_in() {
        let venv = tempfile::tempdir().unwrap();
        let capi = venv
            .path()
            .join("lib/python3.12/site-packages/onnxruntime/capi");
        fs::create_dir_all(&capi).unwrap();
        fs::create_dir_all(venv.path().join("bin")).unwrap();
        fs::write(capi.join("libonnxruntime.so.1.31.1"), b"").unwrap();
        assert_eq!(
            beside_binary(&venv.path().join("bin/oxiserve")),
            Some(capi.join("libonnxruntime.so.1.31.1"))
        );
    }

    #[test]
    fn a_library_beside_the_binary_comes_first() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join("libonnxruntime.so.1.31.1"), b"").unwrap();
        assert_eq!(
            beside_binary(&root.path().join("oxiserve")),
            Some(root.path().join("libonnxruntime.so.1.31.1"))
        );
    }

    #[test]
    fn a_named_library_must_exist() {
        let settings = OnnxSettings {
            library_path: Some("/nonexistent/libonnxruntime.so".into()),
            ..Default::default()
        };
        let error = find(&settings).unwrap_err();
        assert!(
            error.contains("library-path names /nonexistent/libonnxruntime.so"),
            "{error}"
        );
    }
}
