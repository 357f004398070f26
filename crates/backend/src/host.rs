//! What a backend may ask of the server that loaded it: running requests on
//! other models (the Python backend's BLS calls), loading and unloading
//! models (its `pb_utils.load_model`), and custom metrics.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use oxiserve_trace::Trace;
use oxiserve_types::{Error, ErrorKind, InferRequest, InferResponse, Result};

use crate::{metrics::CustomMetrics, sink::CancelFlag};

/// One event of a response stream: a response (or error), or none, and
/// whether it is the last.
#[derive(Debug)]
pub struct StreamEvent {
    pub response: Option<Result<InferResponse>>,
    pub is_final: bool,
}

/// Receives a request's events, possibly on another thread; the last one
/// has `is_final` set.
pub type EventCallback = Box<dyn FnMut(StreamEvent) + Send>;

/// A model's request to load a model: Triton's load parameters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadParameters {
    /// `config`: the configuration as JSON, used instead of `config.pbtxt`.
    pub config: Option<String>,
    /// The files of a model folder made for this load, by path relative to
    /// it (`1/model.onnx`); they need `config`.
    pub files: Vec<(String, Bytes)>,
}

/// One execution a backend ran outside the server's scheduler (the Python
/// backend's direct BLS calls), reported for the model's statistics: one
/// request, computed in `compute`; `failed` when the execution failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectExecution {
    pub compute: Duration,
    pub failed: bool,
}

/// The server, as a backend sees it.
pub trait ModelHost: Send + Sync + std::fmt::Debug {
    /// Validates and queues `request` on the model it names (as a client's
    /// request would be), traced by `trace` (a child of the trace of the
    /// request it is made for) if given; its events go to `on_event`.
    /// Setting `cancel` cancels it. Errors found before it was queued are
    /// returned here and `on_event` is never called.
    fn infer(
        &self,
        request: InferRequest,
        cancel: CancelFlag,
        on_event: EventCallback,
        trace: Option<Trace>,
    ) -> Result<()>;

    /// Whether the model that `model_name` and `version` name may send any
    /// number of responses per request; an error when it is not ready.
    fn is_decoupled(&self, model_name: &str, version: Option<i64>) -> Result<bool>;

    /// The server's custom metric families, shown on its `/metrics`.
    fn custom_metrics(&self) -> Arc<CustomMetrics>;

    /// Loads (or reloads) `model_name` as the repository load request
    /// does, with `parameters`; returns once it is ready or failed. Never
    /// waits for the model that asks (it may be loading or running the
    /// request that asks).
    fn load_model(&self, model_name: &str, parameters: LoadParameters) -> Result<()>;

    /// Takes `model_name` out of service as the repository unload request
    /// does (with `unload_dependents`, also the models only it had loaded);
    /// returns before its versions finished their requests.
    fn unload_model(&self, model_name: &str, unload_dependents: bool) -> Result<()>;

    /// Whether `model_name` (at `version`, or its latest) is ready.
    fn is_model_ready(&self, model_name: &str, version: Option<i64>) -> bool;

    /// Adds `executions` of the asking model's `version` to its statistics
    /// (each one request), as if its scheduler had run them.
    fn record_direct_executions(&self, version: i64, executions: &[DirectExecution]);
}

/// The host of models loaded outside a server (backend unit tests): every
/// call fails; custom metrics work but nothing shows them.
#[derive(Debug, Default)]
pub struct NoHost;

impl ModelHost for NoHost {
    fn infer(
        &self,
        request: InferRequest,
        _: CancelFlag,
        _: EventCallback,
        _: Option<Trace>,
    ) -> Result<()> {
        Err(no_server(&request.model_name))
    }

    fn is_decoupled(&self, model_name: &str, _: Option<i64>) -> Result<bool> {
        Err(no_server(model_name))
    }

    fn custom_metrics(&self) -> Arc<CustomMetrics> {
        Arc::default()
    }

    fn load_model(&self, model_name: &str, _: LoadParameters) -> Result<()> {
        Err(no_server(model_name))
    }

    fn unload_model(&self, model_name: &str, _: bool) -> Result<()> {
        Err(no_server(model_name))
    }

    fn is_model_ready(&self, _: &str, _: Option<i64>) -> bool {
        false
    }

    /// Without a server there are no statistics to add to.
    fn record_direct_executions(&self, _: i64, _: &[DirectExecution]) {}
}

fn no_server(model_name: &str) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        format!("cannot run model '{model_name}': this model was loaded without a server"),
    )
}
