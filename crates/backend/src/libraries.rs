//! Backends this build does not hold: shared libraries found per model
//! (Triton's `libtriton_<name>.so`), behind one trait so that the core needs
//! no loader of its own.

use std::{path::Path, sync::Arc};

use oxiserve_types::Result;

use crate::contract::Backend;

/// The model whose backend is looked up: the names its configuration gives
/// and the folders where a library of its own may lie.
#[derive(Debug, Clone, Copy)]
pub struct BackendQuery<'a> {
    /// `backend` of its configuration.
    pub backend: &'a str,
    /// `runtime` of its configuration: the library's file name when it is
    /// not the backend's default (empty for the default).
    pub runtime: &'a str,
    pub model_name: &'a str,
    /// The model's folder (`<repo>/<name>`).
    pub model_path: &'a Path,
    /// The version folder being loaded (for auto-complete, the highest).
    pub version_path: Option<&'a Path>,
}

/// Finds the backends a build does not hold.
pub trait BackendLibraries: Send + Sync + std::fmt::Debug {
    /// The backend `query` names, from a library: `Ok(None)` when this
    /// finder provides no backend of that name; an error naming the model
    /// when its library is missing or fails to load.
    fn find(&self, query: &BackendQuery<'_>) -> Result<Option<Arc<dyn Backend>>>;

    /// The server stopped: lets go of the libraries, each finalized once
    /// the last model it loaded is gone.
    fn shutdown(&self) {}
}
