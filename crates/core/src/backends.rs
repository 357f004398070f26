//! The backends this server was built with, by name.

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_backend::Backend;

/// Backends by the name `config.pbtxt` gives them (`backend: "identity"`).
#[derive(Default, Clone)]
pub struct BackendRegistry {
    backends: BTreeMap<String, Arc<dyn Backend>>,
}

impl std::fmt::Debug for BackendRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.backends.keys()).finish()
    }
}

impl BackendRegistry {
    /// Adds `backend` under its name.
    pub fn register(&mut self, backend: Arc<dyn Backend>) {
        self.backends.insert(backend.name().to_string(), backend);
    }

    /// The backend called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Backend>> {
        self.backends.get(name)
    }

    /// Every backend name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.backends.keys().map(String::as_str)
    }
}
