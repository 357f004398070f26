//! oxiserve's own backends built as libraries (`libtriton_pytorch.so`,
//! which `cargo build --workspace` leaves beside the binary): registered
//! like built-in backends when their file is there, opened only when a
//! model of theirs loads (docs/design/backend-plugins.md).

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend_capi::{CapiLibraries, PluginBackend};
use oxiserve_core::BackendRegistry;

/// The backends oxiserve builds as libraries.
const PLUGINS: &[&str] = &["pytorch"];

/// Registers each plugin whose library lies in the running binary's folder.
pub fn register(backends: &mut BackendRegistry, libraries: &Arc<CapiLibraries>) {
    if let Some(folder) = binary_folder() {
        register_from(backends, &folder, libraries);
    }
}

fn register_from(backends: &mut BackendRegistry, folder: &Path, libraries: &Arc<CapiLibraries>) {
    for name in PLUGINS {
        let path = folder.join(format!("libtriton_{name}.so"));
        if path.is_file() {
            backends.register(Arc::new(PluginBackend::new(name, path, libraries.clone())));
        }
    }
}

fn binary_folder() -> Option<PathBuf> {
    let binary = std::env::current_exe().ok()?;
    Some(binary.parent()?.to_path_buf())
}

#[cfg(test)]
mod tests {
    use oxiserve_backend_capi::CapiSettings;

    use super::*;

    #[test]
    fn a_plugin_is_listed_only_when_its_library_is_there() {
        let folder = tempfile::tempdir().unwrap();
        let libraries = Arc::new(CapiLibraries::new(CapiSettings::default()));
        let mut backends = BackendRegistry::default();
        register_from(&mut backends, folder.path(), &libraries);
        assert_eq!(backends.names().count(), 0);
        std::fs::write(folder.path().join("libtriton_pytorch.so"), b"").unwrap();
        register_from(&mut backends, folder.path(), &libraries);
        assert_eq!(backends.names().collect::<Vec<_>>(), ["pytorch"]);
    }
}
