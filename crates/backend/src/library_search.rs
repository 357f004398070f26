//! Finding the runtime library a backend opens at run time (ONNX Runtime,
//! OpenVINO, TensorFlow), the same way for every backend.
//!
//! First match wins:
//! 1. `--backend-config=<backend>,library-path=PATH`;
//! 2. the backend's environment variable, when it has one;
//! 3. beside the binary: the library in the binary's folder, then in the
//!    wheel of the Python environment whose `bin/` holds the binary (`pip
//!    install oxiserve` puts it there), then in the nearest `.venv` of the
//!    binary's ancestor folders (a source checkout, where
//!    `scripts/python-env.sh` installs it);
//! 4. the system's library folders.

use std::{
    fs,
    path::{Path, PathBuf},
};

/// The system's library folders, searched last, in this order.
pub const SYSTEM_FOLDERS: [&str; 4] = [
    "/usr/local/lib",
    "/usr/lib",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
];

/// How the library's file is named.
#[derive(Debug, Clone, Copy)]
pub enum LibraryFile {
    /// Any file whose name starts with this (`libonnxruntime.so` matches
    /// `libonnxruntime.so.1.31.1`); the highest-sorting name wins.
    Prefix(&'static str),
    /// The first of these names that is a file in the folder.
    Names(&'static [&'static str]),
}

/// One backend's runtime library and where it is looked for.
#[derive(Debug, Clone, Copy)]
pub struct LibrarySearch {
    /// The runtime as messages name it: `ONNX Runtime`.
    pub runtime: &'static str,
    /// The backend whose `library-path` setting names the library.
    pub backend: &'static str,
    /// An environment variable that names the library, read after the setting.
    pub env_var: Option<&'static str>,
    /// The wheel this build is tested with, as pip takes it: `onnxruntime==1.31.1`.
    pub wheel: &'static str,
    /// The wheel's folder that holds the library, under `site-packages`:
    /// `onnxruntime/capi`.
    pub wheel_folder: &'static str,
    /// The library's file name in that wheel, for messages.
    pub wheel_file: &'static str,
    /// The library's file name as searched for.
    pub file: LibraryFile,
    /// Folders searched after [`SYSTEM_FOLDERS`].
    pub more_system_folders: &'static [&'static str],
}

impl LibrarySearch {
    /// The library to open: `library_path` (the backend's setting) when
    /// given, else the first match of the search; or a message saying what
    /// is wrong and how to install the library.
    pub fn find(&self, library_path: Option<&Path>) -> Result<PathBuf, String> {
        let setting = format!("--backend-config={},library-path", self.backend);
        if let Some(path) = library_path {
            return self.existing(path, &setting);
        }
        if let Some(var) = self.env_var
            && let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty())
        {
            return self.existing(Path::new(&path), var);
        }
        let exe = std::env::current_exe().ok();
        if let Some(found) = exe.as_deref().and_then(|exe| self.beside_binary(exe)) {
            return Ok(found);
        }
        if let Some(found) = self.on_system() {
            return Ok(found);
        }
        let var = self
            .env_var
            .map_or(String::new(), |var| format!("{var} or "));
        Err(format!(
            "{} library not found: install the {} wheel (scripts/python-env.sh puts it in the \
             checkout's .venv, where oxiserve finds it), or set {var}{setting} to its {}/{}",
            self.runtime, self.wheel, self.wheel_folder, self.wheel_file
        ))
    }

    /// The library found beside the binary `exe`: in its folder, in the
    /// wheel of the Python environment above that folder, or in the nearest
    /// `.venv` of its ancestors.
    pub fn beside_binary(&self, exe: &Path) -> Option<PathBuf> {
        let dir = exe.parent()?;
        if let Some(found) = self.library_in(dir) {
            return Some(found);
        }
        if let Some(found) = dir.parent().and_then(|prefix| self.wheel_in(prefix)) {
            return Some(found);
        }
        dir.ancestors()
            .find_map(|folder| self.wheel_in(&folder.join(".venv")))
    }

    /// `path` when it is a file; else a message saying that `origin` names
    /// a library that does not exist.
    fn existing(&self, path: &Path, origin: &str) -> Result<PathBuf, String> {
        if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!(
                "{} library not found: {origin} names {}, which does not exist",
                self.runtime,
                path.display()
            ))
        }
    }

    /// The wheel's library in the Python environment or installation at
    /// `prefix`: `lib/python3.*/{site,dist}-packages/<wheel folder>`.
    fn wheel_in(&self, prefix: &Path) -> Option<PathBuf> {
        let pythons = fs::read_dir(prefix.join("lib")).ok()?;
        pythons.flatten().find_map(|python| {
            ["site-packages", "dist-packages"]
                .iter()
                .find_map(|packages| {
                    self.library_in(&python.path().join(packages).join(self.wheel_folder))
                })
        })
    }

    /// The library in `dir`.
    fn library_in(&self, dir: &Path) -> Option<PathBuf> {
        match self.file {
            LibraryFile::Prefix(prefix) => {
                let mut found: Vec<PathBuf> = fs::read_dir(dir)
                    .ok()?
                    .flatten()
                    .map(|entry| entry.path())
                    .filter(|path| {
                        path.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(prefix))
                    })
                    .collect();
                found.sort();
                found.pop()
            }
            LibraryFile::Names(names) => names
                .iter()
                .map(|name| dir.join(name))
                .find(|path| path.is_file()),
        }
    }

    fn on_system(&self) -> Option<PathBuf> {
        SYSTEM_FOLDERS
            .iter()
            .chain(self.more_system_folders)
            .find_map(|dir| self.library_in(Path::new(dir)))
    }
}

#[cfg(test)]
mod tests;
