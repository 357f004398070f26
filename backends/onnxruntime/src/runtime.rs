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
//!
//! The search is [`oxiserve_backend::library_search`]'s, shared by the
//! backends that open a library.

use std::sync::OnceLock;

use ort::environment::{Environment, GlobalThreadPoolOptions};
use oxiserve_backend::library_search::{LibraryFile, LibrarySearch};

use crate::settings::OnnxSettings;

/// The wheel whose library this build is tested with.
pub(crate) const WHEEL: &str = "onnxruntime==1.31.1";

/// Where the library is looked for.
const LIBRARY: LibrarySearch = LibrarySearch {
    runtime: "ONNX Runtime",
    backend: "onnxruntime",
    env_var: Some("ORT_DYLIB_PATH"),
    wheel: WHEEL,
    wheel_folder: "onnxruntime/capi",
    wheel_file: "libonnxruntime.so.1.31.1",
    file: LibraryFile::Prefix("libonnxruntime.so"),
    more_system_folders: &[],
};

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
    let library = LIBRARY.find(settings.library_path.as_deref())?;
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

#[cfg(test)]
mod tests {
    use oxiserve_backend::testing::library_found_in_wheel;

    use super::*;

    #[test]
    fn finds_the_wheels_library() {
        let venv = tempfile::tempdir().unwrap();
        let files = [
            "libonnxruntime.so.1.31.1",
            "libonnxruntime_providers_shared.so",
        ];
        assert_eq!(
            library_found_in_wheel(&LIBRARY, venv.path(), &files).as_deref(),
            Some("libonnxruntime.so.1.31.1")
        );
    }
}
