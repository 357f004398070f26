//! Finding and opening TensorFlow's library, once per process, when the
//! first TensorFlow model loads.
//!
//! First match wins:
//! 1. `--backend-config=tensorflow,library-path=PATH`;
//! 2. beside the binary: `<exe dir>/libtensorflow_cc.so.2` (or the C
//!    library's `libtensorflow.so.2`), then the `tensorflow-cpu` wheel in the
//!    Python environment whose `bin/` holds the binary, then in the nearest
//!    `.venv` of the binary's ancestor folders (a source checkout, where
//!    `scripts/python-env.sh` installs it);
//! 3. the same names in the system's library folders.
//!
//! The search is [`oxiserve_backend::library_search`]'s.

use std::{ffi::CStr, path::Path, sync::OnceLock};

use libloading::Library;
use oxiserve_backend::library_search::{LibraryFile, LibrarySearch};

use crate::capi::Api;

/// The wheel whose library this build is tested with.
pub(crate) const WHEEL: &str = "tensorflow-cpu==2.19.1";

/// Where the library is looked for: the wheel's, then the C library's file.
const LIBRARY: LibrarySearch = LibrarySearch {
    runtime: "TensorFlow",
    backend: "tensorflow",
    env_var: None,
    wheel: WHEEL,
    wheel_folder: "tensorflow",
    wheel_file: "libtensorflow_cc.so.2",
    file: LibraryFile::Names(&["libtensorflow_cc.so.2", "libtensorflow.so.2"]),
    more_system_folders: &[],
};

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The C API, the library opened on first use (the first caller's
/// `library_path` picks it).
pub(crate) fn api(library_path: Option<&Path>) -> Result<&'static Api, String> {
    API.get_or_init(|| open(library_path))
        .as_ref()
        .map_err(Clone::clone)
}

fn open(library_path: Option<&Path>) -> Result<Api, String> {
    let path = LIBRARY.find(library_path)?;
    // SAFETY: loading TensorFlow runs its static initializers (op and
    // kernel registration), which have no preconditions; the library is
    // never closed, so the functions resolved from it stay valid.
    let library = unsafe { Library::new(&path) }.map_err(|e| {
        format!(
            "TensorFlow library {} could not be loaded: {e}; install {WHEEL} \
             (scripts/python-env.sh does) or point --backend-config=tensorflow,library-path \
             at its libtensorflow_cc.so.2",
            path.display()
        )
    })?;
    let api = Api::resolve(library).map_err(|e| {
        format!(
            "{} is not a TensorFlow 2 C API library: {e}",
            path.display()
        )
    })?;
    // SAFETY: TF_Version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr((api.TF_Version)()) };
    log::info!(
        "tensorflow backend: loaded {} (TensorFlow {})",
        path.display(),
        version.to_string_lossy()
    );
    Ok(api)
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::testing::library_found_in_wheel;

    use super::*;

    #[test]
    fn finds_the_wheels_library() {
        let venv = tempfile::tempdir().unwrap();
        let files = ["libtensorflow_cc.so.2", "libtensorflow_framework.so.2"];
        assert_eq!(
            library_found_in_wheel(&LIBRARY, venv.path(), &files).as_deref(),
            Some("libtensorflow_cc.so.2")
        );
    }
}
