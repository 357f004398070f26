//! The one contract every oxiserve backend implements.
//!
//! A [`Backend`] (identity, onnxruntime, python, ...) loads a [`Model`] for one
//! version of a model; the model creates one [`ModelInstance`] per instance of
//! its `instance_group`. The core runs each instance on its own OS thread and
//! hands it batches of [`BackendRequest`]s; the instance answers each request
//! through its [`ResponseSink`], once, or several times for decoupled models,
//! ending with a final flag.

mod batch;
mod contract;
mod host;
mod libraries;
pub mod library_search;
pub mod metrics;
mod request;
pub mod signature;
mod sink;
pub mod testing;
mod timing;

pub use batch::{BatchOutput, execute_grouped};
pub use contract::{
    AutoCompleteContext, Backend, InstanceContext, InstanceKind, Model, ModelContext, ModelInstance,
};
pub use host::{DirectExecution, EventCallback, LoadParameters, ModelHost, NoHost, StreamEvent};
pub use libraries::{BackendLibraries, BackendQuery};
pub use oxiserve_trace::Trace;
pub use request::{BackendRequest, REQUEST_FIELD_PARAMETERS};
pub use sink::{BackendResponse, CancelFlag, ResponseEvent, ResponseSink, ResponseTarget};
pub use timing::{BatchEnd, ComputeTiming};
