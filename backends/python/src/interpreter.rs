//! Which Python runs a model, first match wins:
//! 1. the model's `EXECUTION_ENV_PATH` parameter (Triton's name): a virtual
//!    environment or conda folder, or a Python executable;
//! 2. `--backend-config=python,python-interpreter=PATH`;
//! 3. next to the binary: `<exe dir>/python/bin/python3`, then the Python of
//!    the virtual environment or conda environment whose `bin/` holds the
//!    binary (`pip install oxiserve`), then the nearest `.venv/bin/python3` in
//!    the binary's ancestor folders (a source checkout);
//! 4. `python3` on `PATH`.

use std::path::{Path, PathBuf};

use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

/// Triton's model parameter naming a model's own Python environment.
pub(crate) const EXECUTION_ENV_PATH: &str = "EXECUTION_ENV_PATH";

/// Finds the interpreter for a model whose folder is `model_path`.
pub(crate) fn find(
    config: &ModelConfig,
    model_path: &Path,
    configured: Option<&Path>,
) -> Result<PathBuf> {
    if let Some(env) = config.parameters.get(EXECUTION_ENV_PATH) {
        return from_env_path(&env.string_value, model_path);
    }
    if let Some(path) = configured {
        return Ok(path.to_path_buf());
    }
    let exe = std::env::current_exe().ok();
    if let Some(found) = exe.as_deref().and_then(beside_binary) {
        return Ok(found);
    }
    on_path(std::env::var_os("PATH").as_deref()).ok_or_else(|| {
        Error::unavailable(
            "python backend: no Python interpreter found: set the model parameter \
             EXECUTION_ENV_PATH or --backend-config=python,python-interpreter=PATH, \
             or put python3 on PATH",
        )
    })
}

fn from_env_path(value: &str, model_path: &Path) -> Result<PathBuf> {
    let expanded = value.replace("$$TRITON_MODEL_DIRECTORY", &model_path.to_string_lossy());
    let path = PathBuf::from(&expanded);
    if expanded.ends_with(".tar.gz") || expanded.ends_with(".tgz") {
        return Err(Error::new(
            oxiserve_types::ErrorKind::Unsupported,
            format!(
                "{EXECUTION_ENV_PATH} '{expanded}': packed environments (.tar.gz) are not supported \
             by oxiserve yet; unpack it and point {EXECUTION_ENV_PATH} at the folder"
            ),
        ));
    }
    if path.is_dir() {
        for candidate in ["bin/python3", "bin/python"] {
            let python = path.join(candidate);
            if python.is_file() {
                return Ok(python);
            }
        }
        return Err(Error::invalid_arg(format!(
            "{EXECUTION_ENV_PATH} '{expanded}' has no bin/python3"
        )));
    }
    if path.is_file() {
        return Ok(path);
    }
    // Triton's words.
    Err(Error::internal(format!(
        "Internal: Failed to get the canonical path for {expanded}."
    )))
}

/// `<exe dir>/python/bin/python3`, the Python of the environment the binary
/// is installed in, or the nearest `.venv/bin/python3` above the binary.
fn beside_binary(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let bundled = dir.join("python/bin/python3");
    if bundled.is_file() {
        return Some(bundled);
    }
    let installed_in_env = dir
        .parent()
        .is_some_and(|env| env.join("pyvenv.cfg").is_file() || env.join("conda-meta").is_dir());
    if installed_in_env && dir.join("python3").is_file() {
        return Some(dir.join("python3"));
    }
    dir.ancestors()
        .map(|a| a.join(".venv/bin/python3"))
        .find(|p| p.is_file())
}

fn on_path(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join("python3"))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use oxiserve_proto::inference::ModelParameter;

    use super::*;

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }

    fn with_env(value: &str) -> ModelConfig {
        let mut config = ModelConfig::default();
        config.parameters.insert(
            EXECUTION_ENV_PATH.into(),
            ModelParameter {
                string_value: value.into(),
            },
        );
        config
    }

    #[test]
    fn execution_env_path_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("m/env/bin/python3"));
        let config = with_env("$$TRITON_MODEL_DIRECTORY/env");
        let found = find(
            &config,
            &dir.path().join("m"),
            Some(Path::new("/x/python3")),
        )
        .unwrap();
        assert_eq!(found, dir.path().join("m/env/bin/python3"));
    }

    #[test]
    fn execution_env_path_errors_are_clear() {
        let dir = tempfile::tempdir().unwrap();
        let err = find(&with_env("/no/such/env"), dir.path(), None).unwrap_err();
        assert_eq!(
            err.message,
            "Internal: Failed to get the canonical path for /no/such/env."
        );
        let err = find(&with_env("/envs/e.tar.gz"), dir.path(), None).unwrap_err();
        assert!(
            err.message.contains("not supported by oxiserve yet"),
            "{}",
            err.message
        );
        fs::create_dir_all(dir.path().join("empty")).unwrap();
        let env = dir.path().join("empty").display().to_string();
        let err = find(&with_env(&env), dir.path(), None).unwrap_err();
        assert!(
            err.message.contains("has no bin/python3"),
            "{}",
            err.message
        );
    }

    #[test]
    fn configured_interpreter_beats_the_search() {
        let found = find(
            &ModelConfig::default(),
            Path::new("/m"),
            Some(Path::new("/opt/p3")),
        )
        .unwrap();
        assert_eq!(found, PathBuf::from("/opt/p3"));
    }

    #[test]
    fn nearest_venv_above_the_binary() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join(".venv/bin/python3"));
        let exe = dir.path().join("target/release/oxiserve");
        assert_eq!(
            beside_binary(&exe),
            Some(dir.path().join(".venv/bin/python3"))
        );
        touch(&dir.path().join("target/release/python/bin/python3"));
        assert_eq!(
            beside_binary(&exe),
            Some(dir.path().join("target/release/python/bin/python3"))
        );
    }

    #[test]
    fn the_python_of_the_venv_the_binary_is_installed_in() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join(".venv/bin/python3"));
        let venv = dir.path().join("env");
        touch(&venv.join("bin/python3"));
        let exe = venv.join("bin/oxiserve");
        assert_eq!(
            beside_binary(&exe),
            Some(dir.path().join(".venv/bin/python3")),
            "no pyvenv.cfg: not a virtual environment"
        );
        touch(&venv.join("pyvenv.cfg"));
        assert_eq!(beside_binary(&exe), Some(venv.join("bin/python3")));
    }

    #[test]
    fn python3_on_path() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("b/python3"));
        let path = std::env::join_paths([dir.path().join("a"), dir.path().join("b")]).unwrap();
        assert_eq!(on_path(Some(&path)), Some(dir.path().join("b/python3")));
    }
}
