//! Finding and loading OpenVINO's C library, once per process.
//!
//! First match wins:
//! 1. `--backend-config=openvino,library-path=PATH`;
//! 2. beside the binary: `<exe dir>/libopenvino_c.so*`, then the `openvino`
//!    wheel in the Python environment whose `bin/` holds the binary, then in
//!    the nearest `.venv` of the binary's ancestor folders (a source
//!    checkout, where `scripts/python-env.sh` installs it);
//! 3. `libopenvino_c.so*` in the system's library folders and
//!    `/opt/intel/openvino/runtime/lib/intel64`.
//!
//! The wheel's library carries its version in its name only
//! (`libopenvino_c.so.2641`), which the `openvino` crate's own finder does
//! not look for; so the path is found here, by
//! [`oxiserve_backend::library_search`], and handed to `load_from`.

use std::{path::PathBuf, sync::OnceLock};

use oxiserve_backend::library_search::{LibraryFile, LibrarySearch};

use crate::settings::OpenVinoSettings;

/// The wheel whose library this build is tested with.
pub(crate) const WHEEL: &str = "openvino==2026.4.1";

/// Where the library is looked for.
const LIBRARY: LibrarySearch = LibrarySearch {
    runtime: "OpenVINO",
    backend: "openvino",
    env_var: None,
    wheel: WHEEL,
    wheel_folder: "openvino/libs",
    wheel_file: "libopenvino_c.so.2641",
    file: LibraryFile::Prefix("libopenvino_c.so"),
    more_system_folders: &["/opt/intel/openvino/runtime/lib/intel64"],
};

/// The outcome of the first load; later backends reuse it.
static LOADED: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// Loads the library on first use; afterwards says how that went.
pub(crate) fn load(settings: &OpenVinoSettings) -> Result<(), String> {
    LOADED
        .get_or_init(|| {
            let library = LIBRARY.find(settings.library_path.as_deref())?;
            openvino_sys::library::load_from(&library).map_err(|e| {
                format!(
                    "OpenVINO library {} could not be loaded: {e}; install {WHEEL} \
                     (scripts/python-env.sh does)",
                    library.display()
                )
            })?;
            log::info!(
                "openvino backend: loaded {} (OpenVINO {})",
                library.display(),
                openvino::version().build_number
            );
            Ok(library)
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use oxiserve_backend::testing::library_found_in_wheel;

    use super::*;

    #[test]
    fn finds_the_wheels_library() {
        let venv = tempfile::tempdir().unwrap();
        let files = ["libopenvino_c.so.2641", "libopenvino.so.2641"];
        assert_eq!(
            library_found_in_wheel(&LIBRARY, venv.path(), &files).as_deref(),
            Some("libopenvino_c.so.2641")
        );
    }
}
