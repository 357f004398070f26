//! The composition root: the server's models, how requests reach them, and
//! how they are loaded and unloaded. Frontends (HTTP, gRPC) call only this.

mod host;
mod install;
mod lifecycle;
mod load_slots;
mod log_settings;
mod lookup;
mod members;
mod poller;

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Instant,
};

use oxiserve_types::{InferRequest, Result};

pub use lifecycle::IndexEntry;
pub use log_settings::{LogControl, LogSettings, LogSettingsUpdate};
pub use poller::Poller;

use crate::{
    BackendRegistry,
    infer::ResponseStream,
    model::{LoadedModel, ModelTable},
    shared_memory::SharedMemoryRegistry,
};

/// How the server manages its model repository (`--model-control-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModelControlMode {
    /// Load everything at start-up; refuse load and unload requests.
    #[default]
    None,
    /// Like `None`, and rescan periodically.
    Poll,
    /// Load only what is asked for, at start-up and through the API.
    Explicit,
}

/// Brings remote model repositories (an object store's) up to date in the
/// local folders the server reads; called before every look at the
/// repositories: start-up, each poll, each load, the index.
pub trait RepositorySync: Send + Sync + std::fmt::Debug {
    /// Updates the local copies; the error says what is wrong.
    fn sync(&self) -> std::result::Result<(), String>;
}

/// The server's settings.
#[derive(Debug, Clone, Default)]
pub struct ServerConfig {
    /// The server's name in its metadata (`--id`, "triton" by default).
    pub id: String,
    pub repositories: Vec<PathBuf>,
    pub control_mode: ModelControlMode,
    /// `--load-model` names for explicit mode (`*` = all).
    pub startup_models: Vec<String>,
    /// `--strict-model-config=false` allows configurations to be completed.
    pub auto_complete: bool,
    /// Ready only while every model is ready (`--strict-readiness`).
    pub strict_readiness: bool,
    /// GPU ids this server can use.
    pub gpus: Vec<i32>,
    /// Record per-model latency histograms (atomics, no lock) for metrics.
    pub latency_histograms: bool,
    /// How many models load at the same time (`--model-load-thread-count`).
    pub model_load_threads: usize,
    /// Caps on what clients can make the server hold.
    pub limits: ServerLimits,
}

/// Caps on what clients can make the server hold, each with a default an
/// ordinary deployment never meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// System shared memory regions registered at once
    /// (`--shared-memory-region-limit`).
    pub shared_memory_regions: usize,
    /// Requests waiting in one model's queue before more are refused with
    /// UNAVAILABLE (`--model-queue-limit`; 0: no limit). A config's own
    /// `max_queue_size` applies as well.
    pub model_queue: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            shared_memory_regions: crate::shared_memory::DEFAULT_MAX_REGIONS,
            model_queue: 10_000,
        }
    }
}

/// A running inference server core, shared by its frontends.
#[derive(Debug, Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: ServerConfig,
    backends: BackendRegistry,
    models: ModelTable,
    live: AtomicBool,
    /// Serializes the changes of the model table by loads and unloads.
    lifecycle: std::sync::Mutex<()>,
    /// Bounds how many models load at a time.
    load_slots: load_slots::LoadSlots,
    /// Serializes the loads and unloads of each model.
    model_locks: std::sync::Mutex<std::collections::HashMap<String, Arc<std::sync::Mutex<()>>>>,
    log_control: std::sync::OnceLock<Arc<dyn LogControl>>,
    repository_sync: std::sync::OnceLock<Arc<dyn RepositorySync>>,
    /// The system shared memory regions every frontend shares.
    shared_memory: SharedMemoryRegistry,
}

impl Server {
    /// A server with no model loaded yet; see [`Server::load_startup_models`].
    pub fn new(config: ServerConfig, backends: BackendRegistry) -> Self {
        Self {
            inner: Arc::new(Inner {
                load_slots: load_slots::LoadSlots::new(config.model_load_threads),
                shared_memory: SharedMemoryRegistry::new(config.limits.shared_memory_regions),
                config,
                backends,
                models: ModelTable::default(),
                live: AtomicBool::new(true),
                lifecycle: Default::default(),
                model_locks: Default::default(),
                log_control: Default::default(),
                repository_sync: Default::default(),
            }),
        }
    }

    /// The server's settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Lets the logging extension read and change the log settings; set once.
    pub fn set_log_control(&self, control: Arc<dyn LogControl>) {
        let _ = self.inner.log_control.set(control);
    }

    /// Syncs remote repositories before each look at them; set once.
    pub fn set_repository_sync(&self, sync: Arc<dyn RepositorySync>) {
        let _ = self.inner.repository_sync.set(sync);
    }

    /// Brings remote repositories up to date, if there are any.
    fn sync_repositories(&self) -> std::result::Result<(), String> {
        match self.inner.repository_sync.get() {
            Some(sync) => sync.sync(),
            None => Ok(()),
        }
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
        self.inner.live.load(Ordering::Relaxed)
    }

    /// Whether the server takes requests (`/v2/health/ready`): live, and with
    /// strict readiness, every model it tried to load is ready.
    pub fn is_ready(&self) -> bool {
        if !self.is_live() {
            return false;
        }
        if !self.inner.config.strict_readiness {
            return true;
        }
        // Every model it tried to load is ready, or was unloaded on request.
        let unloaded = |reason: &str| reason == "unloaded";
        self.inner.models.read(|models| {
            models.values().all(|entry| match &entry.failure {
                Some(reason) => unloaded(reason),
                None => {
                    !entry.versions.is_empty()
                        && entry
                            .versions
                            .values()
                            .all(|slot| slot.model.is_some() || unloaded(&slot.status.reason))
                }
            })
        })
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
    pub fn infer_on(
        &self,
        model: &LoadedModel,
        mut request: InferRequest,
    ) -> Result<ResponseStream> {
        let arrival = Instant::now();
        let output_regions = self.inner.shared_memory.resolve(&mut request)?;
        model.infer(request, arrival, output_regions)
    }

    /// Stops serving: no longer live or ready; every model unloads after its
    /// queued requests finish.
    pub fn shutdown(&self) {
        self.inner.live.store(false, Ordering::Relaxed);
        for (_, entry) in self.inner.models.take_all() {
            for model in entry.loaded() {
                model.shutdown();
            }
        }
    }
}
