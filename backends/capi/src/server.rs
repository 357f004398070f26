//! `TRITONSERVER_Server`: the server as a backend reaches it from a model
//! (`TRITONBACKEND_ModelServer`), to run requests on other models (BLS),
//! load and unload models. One per model, living as long as the model.

use std::sync::Arc;

use oxiserve_backend::ModelHost;
use parking_lot::RwLock;

/// The object behind a `TRITONSERVER_Server*`. The host changes once when
/// a model initialized for auto-complete (without a server) is loaded.
#[derive(Debug)]
pub struct ServerHandle {
    host: RwLock<Arc<dyn ModelHost>>,
}

impl ServerHandle {
    /// The server `host` is.
    pub fn new(host: Arc<dyn ModelHost>) -> Self {
        Self {
            host: RwLock::new(host),
        }
    }

    /// The server now.
    pub fn host(&self) -> Arc<dyn ModelHost> {
        self.host.read().clone()
    }

    /// Serves the model from `host` from now on.
    pub fn set_host(&self, host: Arc<dyn ModelHost>) {
        *self.host.write() = host;
    }
}
