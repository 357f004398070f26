//! The model manager: the model table and everything that changes it.
//! Installing scanned models ([`install`]), the lifecycle requests of
//! start-up, load, unload and the repository index ([`lifecycle`]),
//! ensembles' members ([`members`]), the bound on parallel loads
//! ([`load_slots`]), the repository poller ([`poller`]), finding ready
//! models ([`lookup`]), updating instances in place ([`instance_update`])
//! and the ensembles that follow their members ([`dependents`]). The
//! [`crate::Server`] facade hands it every model request; backends reach
//! models through its [`host`].
//!
//! # Model identities
//! The table is keyed by [`ModelId`]: namespace and name. Without
//! `--model-namespacing` every namespace is empty, so a name is one model.
//! With it each repository is a namespace and a name may be several models;
//! requests name models, and [`lookup`] resolves a name to the one model it
//! means (or answers Triton's ambiguity error). An ensemble's steps are bound
//! to models when it loads ([`members`]), its own namespace first, and the
//! ensemble is loaded again when a copy appearing or going changes what a
//! step finds ([`dependents`]).
//!
//! # Locks, their owners and their order
//! Every lock below belongs to the manager and is taken only in this module,
//! always in this order (a lock is never taken while one later in the list
//! is held):
//! 1. `model_locks`: the map of per-model locks, held only to fetch one;
//! 2. a model's own lock (from `model_locks`): serializes the loads and
//!    unloads of that model, held for the whole load or unload;
//! 3. `load_slots`: a slot of `--model-load-thread-count`, held while a
//!    model's versions load;
//! 4. `lifecycle`: held while an entry of the table is swapped, so that a
//!    replaced entry is retired by exactly one caller;
//! 5. the table's own read/write lock ([`ModelTable`]), held for one read or
//!    one change and never across a call out of this module.
//!
//! The locks are `parking_lot`'s: a panic never poisons them, so no caller
//! has a poisoned lock to recover.
//!
//! A model's own loads and unloads (a Python model's `pb_utils.load_model`,
//! through its [`host`]) come while that model's load, or a request of it,
//! waits for them; [`requester`] says how they keep clear of what that wait
//! holds.

mod dependents;
mod host;
mod install;
mod instance_update;
mod lifecycle;
mod load_slots;
mod lookup;
mod members;
mod poller;
mod requester;
mod table;

use std::{collections::HashMap, sync::Arc, sync::OnceLock};

use oxiserve_backend::metrics::CustomMetrics;
use parking_lot::Mutex;

pub use lifecycle::{IndexEntry, StartUpLoad};
pub use poller::Poller;

use crate::{
    backends::BackendRegistry,
    cache::ResponseCache,
    config::ServerConfig,
    rate_limiter::RateLimiter,
    repository::{ModelId, NOT_UNIQUE_REASON},
};
use table::{ModelEntry, ModelTable, UNLOADED};

/// Brings remote model repositories (an object store's) up to date in the
/// local folders the server reads; called before every look at the
/// repositories: start-up, each poll, each load, the index.
pub trait RepositorySync: Send + Sync + std::fmt::Debug {
    /// Updates the local copies; the error says what is wrong.
    fn sync(&self) -> std::result::Result<(), String>;
}

/// A model version with inferences in flight, and how many (see
/// [`ModelManager::in_flight`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    /// The model, as Triton names it (`<namespace>::<name>` with a namespace).
    pub model: String,
    pub version: i64,
    pub count: usize,
}

/// Owns the model table and every change to it (Triton's model repository
/// manager and model lifecycle). Cheap to clone: clones share one manager.
#[derive(Debug, Clone)]
pub struct ModelManager {
    inner: Arc<Inner>,
    requester: Requester,
}

/// Who asks a manager handle for loads and unloads ([`requester`] applies
/// it).
#[derive(Debug, Clone)]
enum Requester {
    /// A client (HTTP, gRPC), the start-up or the poller: a change waits for
    /// a load slot, for the model's lock and for the versions it retires.
    Client,
    /// A model, which waits for the change: the change takes no load slot
    /// (the model's own load may hold the last one), retires versions in the
    /// background (the asking request may be one they must finish), and
    /// fails rather than waits for the asking model's own lock (whoever
    /// holds it may be loading the model, or retiring the versions whose
    /// request asks).
    Model(ModelId),
}

#[derive(Debug)]
struct Inner {
    config: Arc<ServerConfig>,
    backends: BackendRegistry,
    models: ModelTable,
    /// Serializes the changes of the model table by loads and unloads.
    lifecycle: Mutex<()>,
    /// Bounds how many models load at a time.
    load_slots: load_slots::LoadSlots,
    /// Serializes the loads and unloads of each model.
    model_locks: Mutex<HashMap<ModelId, Arc<Mutex<()>>>>,
    repository_sync: OnceLock<Arc<dyn RepositorySync>>,
    /// The custom metric families its models' backends register.
    custom_metrics: Arc<CustomMetrics>,
    /// The response cache the models that enable it share.
    response_cache: Option<Arc<ResponseCache>>,
    /// The rate limiter every model's instances share; `None`: off.
    rate_limiter: Option<Arc<RateLimiter>>,
}

impl ModelManager {
    /// A manager with no model loaded yet.
    pub fn new(config: Arc<ServerConfig>, backends: BackendRegistry) -> Self {
        Self {
            requester: Requester::Client,
            inner: Arc::new(Inner {
                load_slots: load_slots::LoadSlots::new(config.model_load_threads),
                response_cache: config
                    .response_cache
                    .clone()
                    .map(|store| Arc::new(ResponseCache::new(store))),
                rate_limiter: config
                    .rate_limiter
                    .as_ref()
                    .map(|settings| Arc::new(RateLimiter::new(settings))),
                config,
                backends,
                models: ModelTable::default(),
                lifecycle: Default::default(),
                model_locks: Default::default(),
                repository_sync: Default::default(),
                custom_metrics: Default::default(),
            }),
        }
    }

    /// The custom metric families the models' backends registered.
    pub fn custom_metrics(&self) -> &Arc<CustomMetrics> {
        &self.inner.custom_metrics
    }

    /// The server's settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
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

    /// Whether every model the manager tried to load is ready, or was
    /// unloaded on request (`--strict-readiness`).
    pub fn all_ready(&self) -> bool {
        let unloaded = |reason: &str| reason == UNLOADED || reason == NOT_UNIQUE_REASON;
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

    /// Every loaded model refuses new requests from now on (the server is
    /// stopping); see [`LoadedModel::in_flight`] for what it still serves.
    pub fn stop_accepting(&self) {
        self.inner.models.read(|models| {
            models
                .values()
                .flat_map(ModelEntry::loaded)
                .for_each(|model| model.stop_accepting());
        });
    }

    /// The loaded model versions with inferences in flight, and how many:
    /// what the server waits for when it stops.
    pub fn in_flight(&self) -> Vec<InFlight> {
        self.inner.models.read(|models| {
            models
                .iter()
                .flat_map(|(id, entry)| entry.loaded().map(move |model| (id, model)))
                .map(|(id, model)| InFlight {
                    model: id.to_string(),
                    version: model.version(),
                    count: model.in_flight(),
                })
                .filter(|f| f.count > 0)
                .collect()
        })
    }

    /// Takes every model out of the table; each unloads after its queued
    /// requests finish. Backend libraries are finalized once the last of
    /// their models is gone.
    pub fn shutdown(&self) {
        for (_, entry) in self.inner.models.take_all() {
            for model in entry.loaded() {
                model.shutdown();
            }
        }
        self.inner.backends.shutdown();
    }
}
