//! Triton's backend C API: loads Triton backend libraries
//! (`libtriton_<name>.so`, built against `tritonbackend.h`) and serves each
//! as an ordinary oxiserve [`Backend`](oxiserve_backend::Backend).
//!
//! [`CapiLibraries`] is the registry's fallback for backend names this
//! build does not hold: it finds a model's library as Triton does, opens it
//! once and initializes it. The functions the libraries call
//! (`TRITONBACKEND_*`, `TRITONSERVER_*`) are exported by the binary that
//! links this crate; each is a thin shim over the handles here: the
//! backend ([`library`]), model, instance, request, response, state and
//! the server's in-process API. See docs/design/backend-c-api.md.

mod allocator;
mod api;
mod backend;
mod buffer;
mod clock;
mod error;
mod ffi;
mod inference_request;
mod inference_response;
mod instance;
mod libraries;
mod library;
mod message;
mod metrics;
mod model;
mod model_info;
mod parameter;
mod plugin;
mod request;
mod response;
mod search;
mod server;
mod settings;
mod sink;
mod soname;
mod state;

pub use libraries::CapiLibraries;
pub use plugin::PluginBackend;
pub use settings::{BackendSetting, CapiSettings, DEFAULT_BACKEND_DIRECTORY};
