//! The custom metrics `TRITONSERVER_MetricFamilyNew` registers into. The C
//! API names no server there, so the families go to the server of the
//! models that were loaded last (a process runs one server).

use std::sync::Arc;

use oxiserve_backend::metrics::CustomMetrics;
use parking_lot::Mutex;

static SERVED: Mutex<Option<Arc<CustomMetrics>>> = Mutex::new(None);

/// Families registered from now on show on `metrics`' server.
pub fn serve_from(metrics: Arc<CustomMetrics>) {
    *SERVED.lock() = Some(metrics);
}

/// Where families are registered (a registry nothing shows when no model
/// was loaded through a server).
pub fn registry() -> Arc<CustomMetrics> {
    SERVED.lock().get_or_insert_with(Arc::default).clone()
}
