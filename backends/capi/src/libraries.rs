//! The loader the server's backend registry falls back to: finds a model's
//! library, opens each library once (by path and backend name) and hands
//! out its [`CapiBackend`].

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use oxiserve_backend::{Backend, BackendLibraries, BackendQuery};
use oxiserve_types::Result;
use parking_lot::Mutex;

use crate::{
    backend::{CapiBackend, Completed},
    library::{BackendHandle, load_failure},
    search::find_library,
    settings::CapiSettings,
};

/// Triton's backend libraries, found as Triton finds them.
#[derive(Debug)]
pub struct CapiLibraries {
    settings: CapiSettings,
    /// Opened libraries by (path, backend name); a library stays open (and
    /// initialized) until [`BackendLibraries::shutdown`] and its last model
    /// let go of it.
    opened: Mutex<HashMap<(PathBuf, String), Arc<BackendHandle>>>,
    /// Models auto-complete initialized, until their loads take them.
    completed: Arc<Completed>,
}

impl CapiLibraries {
    /// A loader with the command line's `settings`.
    pub fn new(settings: CapiSettings) -> Self {
        Self {
            settings,
            opened: Mutex::default(),
            completed: Arc::default(),
        }
    }

    /// The backend `name` of the library at `path`, opened and initialized
    /// on first use; a failure names `model`, the model that needed it.
    pub fn open(&self, name: &str, path: &Path, model: &str) -> Result<Arc<dyn Backend>> {
        let key = (path.to_path_buf(), name.to_string());
        let mut opened = self.opened.lock();
        let library = match opened.get(&key) {
            Some(library) => library.clone(),
            None => {
                let config = self.settings.backend_config(name);
                let library = BackendHandle::open(name, path, &config)
                    .map_err(|e| load_failure(model, path, e))?;
                log::info!("loaded backend '{name}' from {}", path.display());
                opened.insert(key, library.clone());
                library
            }
        };
        Ok(Arc::new(CapiBackend::new(
            library,
            self.settings.auto_complete,
            self.completed.clone(),
        )))
    }
}

impl BackendLibraries for CapiLibraries {
    fn find(&self, query: &BackendQuery<'_>) -> Result<Option<Arc<dyn Backend>>> {
        let path = find_library(query, &self.settings.backend_directory)?;
        self.open(query.backend, &path, query.model_name).map(Some)
    }

    fn shutdown(&self) {
        self.completed.lock().clear();
        self.opened.lock().clear();
    }
}
