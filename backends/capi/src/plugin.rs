//! oxiserve's own backends built as libraries (`libtriton_pytorch.so`,
//! made with oxiserve-backend-library and installed beside the binary):
//! listed like built-in backends, but opened only when the first model of
//! theirs loads, so the server maps their runtime (libtorch) only then.

use std::{path::PathBuf, sync::Arc};

use oxiserve_backend::{Backend, Model, ModelContext};
use oxiserve_types::Result;

use crate::libraries::CapiLibraries;

/// A backend whose library is opened at its first use.
#[derive(Debug)]
pub struct PluginBackend {
    name: String,
    path: PathBuf,
    libraries: Arc<CapiLibraries>,
}

impl PluginBackend {
    /// The backend `name` of the library at `path`, opened through
    /// `libraries` (which keeps it open once opened).
    pub fn new(name: &str, path: PathBuf, libraries: Arc<CapiLibraries>) -> Self {
        Self {
            name: name.to_string(),
            path,
            libraries,
        }
    }

    fn open(&self, model: &str) -> Result<Arc<dyn Backend>> {
        self.libraries.open(&self.name, &self.path, model)
    }
}

/// No auto-complete: these backends, like Triton's PyTorch backend, take the
/// configuration as written (so listing one opens nothing).
impl Backend for PluginBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn load(&self, model: &ModelContext) -> Result<Arc<dyn Model>> {
        self.open(&model.name)?.load(model)
    }

    /// Loads the model and lets it go: what is wrong with its files shows
    /// as its load would show it.
    fn check(&self, model: &ModelContext) -> Result<()> {
        self.open(&model.name)?.load(model).map(drop)
    }
}
