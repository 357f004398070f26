//! The facade frontends (HTTP, gRPC) call: health, inference, shared
//! memory, log settings, and the model requests it hands to the
//! [`ModelManager`].

mod log_settings;
mod models;

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use oxiserve_trace::{Trace, TraceManager};
use oxiserve_types::{InferRequest, Result};

pub use log_settings::{LogControl, LogSettings, LogSettingsUpdate};

use crate::{
    backends::BackendRegistry,
    config::ServerConfig,
    infer::ResponseStream,
    manager::{InFlight, ModelManager, RepositorySync},
    model::LoadedModel,
    shared_memory::SharedMemoryRegistry,
};

/// A running inference server core, shared by its frontends.
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Arc<ServerConfig>,
    /// The model table and everything that changes it.
    manager: ModelManager,
    live: AtomicBool,
    /// Start-up failed (a repository could not be read) and the server
    /// serves on with `--exit-on-error=false`, as Triton: not live, not
    /// ready, and its model APIs answer "Server not ready".
    failed: AtomicBool,
    log_control: OnceLock<Arc<dyn LogControl>>,
    /// Trace settings and sampling (tracing off unless the binary set one).
    tracing: OnceLock<Arc<TraceManager>>,
    /// The system shared memory regions every frontend shares.
    shared_memory: SharedMemoryRegistry,
}

impl Server {
    /// A server with no model loaded yet; see [`Server::load_startup_models`].
    pub fn new(config: ServerConfig, backends: BackendRegistry) -> Self {
        let config = Arc::new(config);
        Self {
            inner: Arc::new(Inner {
                manager: ModelManager::new(config.clone(), backends),
                shared_memory: SharedMemoryRegistry::new(config.limits.shared_memory_regions),
                config,
                live: AtomicBool::new(true),
                failed: AtomicBool::new(false),
                log_control: Default::default(),
                tracing: Default::default(),
            }),
        }
    }

    /// The server's settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The model manager: the model table, loads, unloads and polling.
    pub fn manager(&self) -> &ModelManager {
        &self.inner.manager
    }

    /// Lets the logging extension read and change the log settings; set once.
    pub fn set_log_control(&self, control: Arc<dyn LogControl>) {
        let _ = self.inner.log_control.set(control);
    }

    /// Syncs remote repositories before each look at them; set once.
    pub fn set_repository_sync(&self, sync: Arc<dyn RepositorySync>) {
        self.inner.manager.set_repository_sync(sync);
    }

    /// Traces requests with `tracing`'s settings; set once, before serving.
    pub fn set_tracing(&self, tracing: Arc<TraceManager>) {
        let _ = self.inner.tracing.set(tracing);
    }

    /// The trace settings and sampling (Triton's trace extension).
    pub fn tracing(&self) -> &TraceManager {
        self.inner.tracing.get_or_init(Default::default)
    }

    /// The log settings' owner, if the binary set one.
    pub fn log_control(&self) -> Option<&Arc<dyn LogControl>> {
        self.inner.log_control.get()
    }

    /// The system shared memory regions (Triton's shared memory extension).
    pub fn shared_memory(&self) -> &SharedMemoryRegistry {
        &self.inner.shared_memory
    }

    /// Whether the server is up (`/v2/health/live`).
    pub fn is_live(&self) -> bool {
        self.inner.live.load(Ordering::Relaxed) && !self.has_failed()
    }

    /// Marks start-up as failed: the server goes on (`--exit-on-error=false`)
    /// but is neither live nor ready, and its model APIs refuse requests.
    pub fn fail_start_up(&self) {
        self.inner.failed.store(true, Ordering::Relaxed);
    }

    /// Whether start-up failed (see [`Server::fail_start_up`]).
    pub fn has_failed(&self) -> bool {
        self.inner.failed.load(Ordering::Relaxed)
    }

    /// Whether the server takes requests (`/v2/health/ready`): live, and with
    /// strict readiness, every model it tried to load is ready.
    pub fn is_ready(&self) -> bool {
        self.is_live() && (!self.inner.config.strict_readiness || self.inner.manager.all_ready())
    }

    /// Sends `request` to its model; the responses come on the stream.
    /// Inputs whose parameters name a shared memory region are read from
    /// it, and outputs that name one are written into it (see
    /// [`SharedMemoryRegistry`]).
    pub fn infer(&self, request: InferRequest) -> Result<ResponseStream> {
        let model = self.model(&request.model_name, request.model_version)?;
        self.infer_on(&model, request)
    }

    /// Like [`Server::infer`], on a model the caller already looked up with
    /// [`Server::model`] (frontends that check the model first, e.g. for the
    /// decoupled policy): no second lookup, and the same version for sure.
    pub fn infer_on(&self, model: &LoadedModel, request: InferRequest) -> Result<ResponseStream> {
        self.infer_traced(model, request, None)
    }

    /// [`Server::infer_on`] for a request the frontend sampled for tracing
    /// (see [`Server::tracing`]): the core reports its activities on `trace`.
    pub fn infer_traced(
        &self,
        model: &LoadedModel,
        mut request: InferRequest,
        trace: Option<Trace>,
    ) -> Result<ResponseStream> {
        let arrival = Instant::now();
        let output_regions = self.inner.shared_memory.resolve(&mut request)?;
        model.infer(request, arrival, output_regions, trace)
    }

    /// Begins to stop, as Triton does on a signal: no longer live or ready,
    /// and every model refuses new inference requests ("Server is
    /// stopping...") while those in flight finish. The endpoints still answer.
    pub fn stop_accepting(&self) {
        self.inner.live.store(false, Ordering::Relaxed);
        self.inner.manager.stop_accepting();
    }

    /// See [`ModelManager::in_flight`].
    pub fn in_flight(&self) -> Vec<InFlight> {
        self.inner.manager.in_flight()
    }

    /// Stops serving: no longer live or ready; every model unloads after its
    /// queued requests finish.
    pub fn shutdown(&self) {
        self.inner.live.store(false, Ordering::Relaxed);
        self.inner.manager.shutdown();
    }
}
