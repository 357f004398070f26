//! Putting models in service and taking them out. A new load serves only
//! once it is ready; the versions it replaces (or an unload takes out of
//! service) first finish every request already given to them, then shut
//! down, so that a reload drops no request.

use std::{
    collections::VecDeque,
    sync::Arc,
    time::{Duration, Instant},
};

use oxiserve_backend::{BackendQuery, ModelContext};
use oxiserve_config::platform::ENSEMBLE_PLATFORM;
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use super::{
    ModelManager,
    host::ServerHost,
    members, requester,
    table::{ModelEntry, UNLOADED, VersionSlot},
};
use crate::{
    model::{LoadSettings, LoadedModel, ModelState, VersionStatus},
    repository::{
        Fingerprint, FolderPoll, ModelId, ModelSpec, NOT_UNIQUE_REASON, OverrideFolder,
        ScannedModel,
    },
    stats::StatsSettings,
};

/// How long a replaced version waits for the requests that found it just
/// before it was replaced to reach its queue.
const RETIRE_WAIT: Duration = Duration::from_secs(10);

/// Where a load comes from, kept with the model.
#[derive(Debug, Default, Clone)]
pub(super) struct Origin {
    /// Loaded on request or at start-up, not only as an ensemble's member.
    pub explicit: bool,
    /// The folder written from the load request's files.
    pub folder: Option<Arc<OverrideFolder>>,
    /// The load request gave a configuration (not the folder's).
    pub config_given: bool,
}

/// Model versions out of service, still finishing their requests.
struct Retired {
    models: Vec<Arc<LoadedModel>>,
    /// Kept until the models are gone.
    _folder: Option<Arc<OverrideFolder>>,
}

impl ModelManager {
    /// Loads every version of a scanned model and puts the result in the
    /// table, replacing (then retiring) what was there. A failed reload
    /// leaves the loaded versions serving, as in Triton. A model whose
    /// folder could not be polled stays out of the table; one found in two
    /// repositories is taken out of service.
    pub(super) fn install(&self, model: ScannedModel, origin: Origin) -> ModelEntry {
        if model.poll == FolderPoll::Read {
            return self.install_read(model, origin);
        }
        let failure = poll_failure(&model);
        if model.poll == FolderPoll::NotUnique {
            self.take_out_not_unique(&model.id);
        }
        ModelEntry {
            failure: Some(failure),
            ..Default::default()
        }
    }

    /// [`ModelManager::install`] for a model whose folder was read. When a
    /// version of a new load fails, the versions that loaded are unloaded:
    /// the model is unavailable as a whole, as in Triton.
    fn install_read(&self, model: ScannedModel, origin: Origin) -> ModelEntry {
        let id = model.id;
        let lock = self.model_lock(&id);
        let Some(_serial) = self.lock_model(&lock, &id) else {
            return ModelEntry {
                failure: Some(requester::busy(&id)),
                ..Default::default()
            };
        };
        let mut previous = self.inner.models.get(&id);
        if let (Ok(spec), Some(old)) = (&model.outcome, &previous) {
            match self.update_instances(old, spec, &origin) {
                Some(Ok(entry)) => {
                    let _guard = self.inner.lifecycle.lock();
                    // The versions replaced share their instances with the
                    // new ones: nothing to retire.
                    self.inner.models.replace(&id, entry.clone());
                    return entry;
                }
                Some(Err(reason)) => {
                    return ModelEntry {
                        failure: Some(reason),
                        ..Default::default()
                    };
                }
                None => {}
            }
        }
        let mut entry = match model.outcome {
            Err(errors) => {
                let reason = errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                log::error!("failed to load '{id}': {reason}");
                ModelEntry {
                    failure: Some(reason),
                    ..Default::default()
                }
            }
            Ok(spec) => {
                let _slot = self.load_slot();
                self.load_versions(&id, spec)
            }
        };
        entry.explicit = origin.explicit || previous.as_ref().is_some_and(|p| p.explicit);
        entry.folder = origin.folder;
        let failed = entry.failed();
        let keep_previous = failed
            && previous
                .as_ref()
                .is_some_and(|p| p.loaded().next().is_some());
        let released = match failed && !keep_previous && entry.failure.is_none() {
            true => {
                log::info!("failed to load '{id}'");
                entry.release_loaded()
            }
            false => Vec::new(),
        };
        let mut stored = entry.clone();
        if let Some(previous) = previous.as_ref().filter(|_| entry.failure.is_none()) {
            keep_dropped_versions(&mut stored, previous);
        }
        let retired = {
            let _guard = self.inner.lifecycle.lock();
            if let Some(previous) = previous.take().filter(|_| keep_previous) {
                log::error!("reload of '{id}' failed; the loaded versions keep serving");
                self.inner.models.replace(&id, previous);
                Retired {
                    models: entry.take_models(),
                    _folder: entry.folder.take(),
                }
            } else {
                let mut old = self.inner.models.replace(&id, stored).unwrap_or_default();
                let mut models = old.take_models();
                models.extend(released);
                Retired {
                    models,
                    _folder: old.folder.take(),
                }
            }
        };
        self.retiring(move || retire(&id, retired));
        entry
    }

    /// Installs `models` (in load order) with up to `model_load_threads`
    /// loads at a time; an ensemble waits for the members listed with it
    /// (every model of a step's name). `explicit` says, by name, which are
    /// loaded explicitly. Returns the models that failed, as Triton names
    /// them, sorted.
    pub(super) fn install_in_parallel(
        &self,
        models: Vec<ScannedModel>,
        explicit: impl Fn(&str) -> bool + Sync,
    ) -> Vec<String> {
        let threads = self.config().model_load_threads.max(1);
        let failed = Mutex::new(Vec::new());
        let mut pending = models;
        while !pending.is_empty() {
            let names: Vec<String> = pending.iter().map(|m| m.id.name.clone()).collect();
            let (mut wave, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|m| {
                members::members(m)
                    .iter()
                    .all(|member| *member == m.id.name || !names.iter().any(|n| n == member))
            });
            pending = rest;
            if wave.is_empty() {
                // A cycle, refused by validation anyway: one at a time.
                wave.push(pending.remove(0));
            }
            let queue = Mutex::new(VecDeque::from(wave));
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| {
                        loop {
                            // (Not in a `while let`: its lock would last the load.)
                            let next = queue.lock().pop_front();
                            let Some(model) = next else { break };
                            let origin = Origin {
                                explicit: explicit(&model.id.name),
                                ..Default::default()
                            };
                            let id = model.id.clone();
                            if self.install(model, origin).failed() {
                                failed.lock().push(id.to_string());
                            }
                        }
                    });
                }
            });
        }
        let mut failed = failed.into_inner();
        failed.sort();
        failed
    }

    /// Takes `id` out of service: its versions become unavailable with
    /// `reason`, finish their requests and shut down. Returns the model's
    /// last configuration, or `None` if it was not known; fails only when
    /// the model asking is `id` and its lock is busy ([`requester`]).
    pub(super) fn take_out(&self, id: &ModelId, reason: &str) -> Result<Option<Arc<ModelConfig>>> {
        let lock = self.model_lock(id);
        let Some(_serial) = self.lock_model(&lock, id) else {
            return Err(Error::unavailable(requester::busy(id)));
        };
        let old = {
            let _guard = self.inner.lifecycle.lock();
            self.inner.models.mark_unavailable(id, reason)
        };
        let Some(mut old) = old else {
            return Ok(None);
        };
        let retired = Retired {
            models: old.take_models(),
            _folder: old.folder.take(),
        };
        let id = id.clone();
        self.retiring(move || retire(&id, retired));
        Ok(old.config)
    }

    /// Takes `id` out of service as unloaded and out of the global map: it
    /// was unloaded on request or its folder is gone. Returns what
    /// [`Self::take_out`] returns.
    pub(super) fn remove(&self, id: &ModelId) -> Result<Option<Arc<ModelConfig>>> {
        let config = self.take_out(id, UNLOADED)?;
        self.inner.models.update(id, |entry| entry.removed = true);
        Ok(config)
    }

    /// Takes a model found in two repositories out of service, with the
    /// ensembles that use it; its index row gives the reason.
    fn take_out_not_unique(&self, id: &ModelId) {
        if matches!(self.take_out(id, NOT_UNIQUE_REASON), Ok(Some(_))) {
            self.inner.models.update(id, |entry| {
                entry.versions.clear();
                entry.failure = Some(NOT_UNIQUE_REASON.to_string());
            });
            self.follow_members(&id.name);
        }
    }

    /// The lock that serializes the loads and unloads of one model.
    fn model_lock(&self, id: &ModelId) -> Arc<Mutex<()>> {
        let mut locks = self.inner.model_locks.lock();
        locks.entry(id.clone()).or_default().clone()
    }

    /// Loads every version of `spec`, model `id`; an ensemble's steps are
    /// bound first, and an ensemble with a step that finds no model (or
    /// several) fails as a whole, as in Triton.
    fn load_versions(&self, id: &ModelId, spec: ModelSpec) -> ModelEntry {
        let mut config = spec.config;
        let unbound = self.bind_steps(id, &mut config);
        let config = Arc::new(config);
        let mut entry = ModelEntry {
            config: Some(config.clone()),
            files: Fingerprint::split(&spec.dir.path),
            ..Default::default()
        };
        if !unbound.is_empty() {
            let reason = format!(
                "ensemble {id} contains models that are not available or ambiguous: {}",
                unbound.join(", ")
            );
            log::error!("failed to load '{id}': {reason}");
            entry.failure = Some(reason);
            return entry;
        }
        for version in spec.versions {
            let context = ModelContext {
                name: config.name.clone(),
                version: version.version,
                config: config.clone(),
                model_path: spec.dir.path.clone(),
                version_path: version.path.clone(),
                host: ServerHost::new(self, id),
            };
            self.inner.models.set_status(
                id,
                VersionStatus {
                    version: version.version,
                    state: ModelState::Loading,
                    reason: String::new(),
                },
            );
            let started = Instant::now();
            let (state, reason, model) = match self.load_version_retried(id, context) {
                Ok(model) => {
                    log::info!(
                        "loaded '{id}' version {} in {} ms",
                        version.version,
                        started.elapsed().as_millis()
                    );
                    (ModelState::Ready, String::new(), Some(Arc::new(model)))
                }
                Err(e) => {
                    log::error!(
                        "failed to load '{id}' version {}: {}",
                        version.version,
                        e.message
                    );
                    (ModelState::Unavailable, e.message, None)
                }
            };
            let status = VersionStatus {
                version: version.version,
                state,
                reason,
            };
            entry
                .versions
                .insert(version.version, VersionSlot { status, model });
        }
        if !entry.versions.is_empty() && entry.loaded().count() == entry.versions.len() {
            // Once per model, the line operators grep for, as Triton writes it.
            log::info!("successfully loaded '{id}'");
        }
        entry
    }

    /// [`Self::load_version`], tried again up to `--model-load-retry-count`
    /// times while it fails, as Triton does.
    fn load_version_retried(&self, id: &ModelId, context: ModelContext) -> Result<LoadedModel> {
        let retries = self.config().model_load_retries;
        let mut attempt = 0;
        loop {
            match self.load_version(id, context.clone()) {
                Err(e) if attempt < retries => {
                    attempt += 1;
                    log::warn!(
                        "failed to load '{id}' version {}: {}; trying again ({attempt} of {retries})",
                        context.version,
                        e.message
                    );
                }
                result => return result.map(|model| model.in_namespace(&id.namespace)),
            }
        }
    }

    fn load_version(&self, id: &ModelId, context: ModelContext) -> Result<LoadedModel> {
        let config = &context.config;
        if config.platform == ENSEMBLE_PLATFORM {
            self.check_members_ready(id, config)?;
            let stats = StatsSettings::of(self.config());
            let steps = ServerHost::for_steps(self, config);
            let cache = self.inner.response_cache.clone();
            return LoadedModel::ensemble(context, steps, &stats, cache);
        }
        let query = BackendQuery {
            backend: &config.backend,
            runtime: &config.runtime,
            model_name: &context.name,
            model_path: &context.model_path,
            version_path: Some(&context.version_path),
        };
        let backend = self.inner.backends.get(&query)?.ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!(
                    "backend '{}' is not available in this build; available backends: {}",
                    config.backend,
                    self.inner.backends.names().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        let settings = LoadSettings {
            stats: StatsSettings::of(self.config()),
            queue_limit: self.config().limits.model_queue,
            cache: self.inner.response_cache.clone(),
            rate_limiter: self.inner.rate_limiter.clone(),
        };
        LoadedModel::load(backend.as_ref(), context, settings)
    }
}

/// Why a model's folder was not polled, logged as Triton logs it.
pub(super) fn poll_failure(model: &ScannedModel) -> String {
    if model.poll == FolderPoll::NotUnique {
        log::error!(
            "failed to poll model '{}': not unique across all model repositories",
            model.id
        );
        return NOT_UNIQUE_REASON.to_string();
    }
    let reason = match &model.outcome {
        Err(errors) => errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        Ok(_) => String::new(),
    };
    log::error!("Poll failed for model directory '{}': {reason}", model.id);
    reason
}

/// Versions of `previous` that the new load no longer serves (its version
/// policy changed) stay in the entry as unloaded, as Triton keeps them: a
/// request for one hears that it is not ready, not that it is unknown.
fn keep_dropped_versions(entry: &mut ModelEntry, previous: &ModelEntry) {
    for (&version, slot) in &previous.versions {
        entry
            .versions
            .entry(version)
            .or_insert_with(|| VersionSlot {
                status: VersionStatus {
                    version,
                    state: ModelState::Unavailable,
                    reason: if slot.model.is_some() {
                        UNLOADED.to_string()
                    } else {
                        slot.status.reason.clone()
                    },
                },
                model: None,
            });
    }
}

/// Lets requests that found the retired versions just before they left the
/// table reach their queues (their handlers hold a reference until then),
/// then shuts the versions down, which finishes every queued request.
fn retire(id: &ModelId, retired: Retired) {
    let any = !retired.models.is_empty();
    for model in retired.models {
        let deadline = Instant::now() + RETIRE_WAIT;
        while Arc::strong_count(&model) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if Arc::strong_count(&model) > 1 {
            log::warn!(
                "'{id}' version {} is still in use after {} s; shutting it down anyway",
                model.version(),
                RETIRE_WAIT.as_secs()
            );
        }
        model.shutdown();
        log::info!("successfully unloaded '{id}' version {}", model.version());
    }
    if any {
        release_freed_memory();
    }
}

/// Gives back to the system what the C allocator keeps of an unloaded
/// model. glibc holds the freed blocks of in-process backends (ONNX Runtime)
/// in its arenas: 20 reloads of a 90 MB ONNX model left 251 MB resident,
/// 138 MB after a trim (unloaded: 61 MB, 46 MB after a trim).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
