//! The backends a model may name: those built into this server, by name,
//! then the libraries a [`BackendLibraries`] finds (Triton's C API backends).

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_backend::{Backend, BackendLibraries, BackendQuery};
use oxiserve_types::Result;

/// Backends by the name `config.pbtxt` gives them (`backend: "identity"`).
#[derive(Default, Clone)]
pub struct BackendRegistry {
    backends: BTreeMap<String, Arc<dyn Backend>>,
    libraries: Option<Arc<dyn BackendLibraries>>,
}

impl std::fmt::Debug for BackendRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendRegistry")
            .field("built_in", &self.backends.keys().collect::<Vec<_>>())
            .field("libraries", &self.libraries)
            .finish()
    }
}

impl BackendRegistry {
    /// Adds `backend` under its name.
    pub fn register(&mut self, backend: Arc<dyn Backend>) {
        self.backends.insert(backend.name().to_string(), backend);
    }

    /// Where backends not built in are looked for.
    pub fn set_libraries(&mut self, libraries: Arc<dyn BackendLibraries>) {
        self.libraries = Some(libraries);
    }

    /// The backend of the model `query` describes: the built-in one of its
    /// name, else a library's; `Ok(None)` when neither provides it, an
    /// error when its library is missing or fails to load. A configuration
    /// whose `runtime` names a shared library (`libtriton_python.so`) asks
    /// for that library even where a backend of its name is built in.
    pub fn get(&self, query: &BackendQuery<'_>) -> Result<Option<Arc<dyn Backend>>> {
        let names_library = query.runtime.ends_with(".so");
        if let Some(backend) = self.backends.get(query.backend).filter(|_| !names_library) {
            return Ok(Some(backend.clone()));
        }
        match &self.libraries {
            Some(libraries) if !query.backend.is_empty() => libraries.find(query),
            _ => Ok(None),
        }
    }

    /// Every built-in backend's name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.backends.keys().map(String::as_str)
    }

    /// The server stopped: the libraries are let go (see
    /// [`BackendLibraries::shutdown`]).
    pub fn shutdown(&self) {
        if let Some(libraries) = &self.libraries {
            libraries.shutdown();
        }
    }
}
