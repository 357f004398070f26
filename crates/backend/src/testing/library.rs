//! A backend's [`LibrarySearch`] checked against the layout of its wheel.

use std::{fs, path::Path};

use crate::library_search::LibrarySearch;

/// Lays out `search`'s wheel holding `files` in a Python environment at
/// `venv`, and returns the name of the file found for a binary in the
/// environment's `bin/` (`None` when nothing in the wheel is found).
pub fn library_found_in_wheel(
    search: &LibrarySearch,
    venv: &Path,
    files: &[&str],
) -> Option<String> {
    let folder = venv
        .join("lib/python3.12/site-packages")
        .join(search.wheel_folder);
    fs::create_dir_all(&folder).expect("the wheel's folder");
    for file in files {
        fs::write(folder.join(file), b"").expect("a library file");
    }
    let found = search.beside_binary(&venv.join("bin/oxiserve"))?;
    Some(found.strip_prefix(&folder).ok()?.to_str()?.to_string())
}
