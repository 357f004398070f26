//! The model table: every model the manager knows, with each version's
//! state and, while it is loaded, the version itself.

use std::{collections::BTreeMap, sync::Arc};

use oxiserve_proto::ModelConfig;
use parking_lot::RwLock;

use crate::{
    model::{LoadedModel, ModelState, VersionStatus},
    repository::{ModelFiles, ModelId, OverrideFolder},
};

/// The reason a version that was unloaded (not one that failed) gives, as
/// Triton words it; such a version does not make the server unready.
pub(crate) const UNLOADED: &str = "unloaded";

/// One version of a model: its status, and the model while it is loaded.
#[derive(Debug, Clone)]
pub(crate) struct VersionSlot {
    pub status: VersionStatus,
    pub model: Option<Arc<LoadedModel>>,
}

/// One model: its versions, and the configuration of its last load.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelEntry {
    pub versions: BTreeMap<i64, VersionSlot>,
    pub config: Option<Arc<ModelConfig>>,
    /// Why the model has no versions at all (its configuration is invalid, its
    /// folder is missing, it was unloaded).
    pub failure: Option<String>,
    /// Loaded on request or at start-up, not only as an ensemble's member.
    pub explicit: bool,
    /// The folder written from a load request's files, while loaded from it.
    pub folder: Option<Arc<OverrideFolder>>,
    /// The model folder's files as loaded: whether a later load changes
    /// only its configuration.
    pub files: Option<ModelFiles>,
    /// An ensemble taken out of service because a member was unloaded: it
    /// loads again when its members are back.
    pub awaits_members: bool,
    /// Unloaded on request, or gone from its repository: out of Triton's
    /// global map, so that with namespacing its name resolves among the
    /// other copies (its statuses stay for the index).
    pub removed: bool,
}

impl ModelEntry {
    /// The ready version `version`, or the highest ready version.
    pub fn ready(&self, version: Option<i64>) -> Option<&Arc<LoadedModel>> {
        match version {
            Some(v) => self.versions.get(&v)?.model.as_ref(),
            None => self.versions.values().rev().find_map(|s| s.model.as_ref()),
        }
    }

    /// Whether the model, or one of its versions, failed to load.
    pub fn failed(&self) -> bool {
        self.failure.is_some() || self.versions.values().any(|s| s.model.is_none())
    }

    /// Every loaded version.
    pub fn loaded(&self) -> impl Iterator<Item = &Arc<LoadedModel>> {
        self.versions.values().filter_map(|s| s.model.as_ref())
    }

    /// Takes the loaded models out of the slots (their statuses stay).
    pub fn take_models(&mut self) -> Vec<Arc<LoadedModel>> {
        self.versions
            .values_mut()
            .filter_map(|s| s.model.take())
            .collect()
    }

    /// Takes the loaded models out, their versions now unavailable as
    /// "unloaded" (a version that failed keeps its reason).
    pub fn release_loaded(&mut self) -> Vec<Arc<LoadedModel>> {
        let mut released = Vec::new();
        for slot in self.versions.values_mut() {
            if let Some(model) = slot.model.take() {
                slot.status.state = ModelState::Unavailable;
                slot.status.reason = UNLOADED.to_string();
                released.push(model);
            }
        }
        released
    }

    /// A model that failed or was unloaded keeps its statuses, without models.
    pub fn unavailable(&self, reason: &str) -> ModelEntry {
        let versions = self
            .versions
            .iter()
            .map(|(&v, _)| {
                let status = VersionStatus {
                    version: v,
                    state: ModelState::Unavailable,
                    reason: reason.to_string(),
                };
                (
                    v,
                    VersionSlot {
                        status,
                        model: None,
                    },
                )
            })
            .collect();
        ModelEntry {
            versions,
            config: self.config.clone(),
            failure: self.versions.is_empty().then(|| reason.to_string()),
            explicit: self.explicit,
            folder: None,
            files: None,
            awaits_members: false,
            removed: self.removed,
        }
    }
}

/// The table of models, read on every request, written on load and unload.
#[derive(Debug, Default)]
pub(crate) struct ModelTable {
    entries: RwLock<BTreeMap<ModelId, ModelEntry>>,
}

/// The table's entries, by model.
pub(crate) type Entries = BTreeMap<ModelId, ModelEntry>;

impl ModelTable {
    /// Reads the table.
    pub fn read<T>(&self, f: impl FnOnce(&Entries) -> T) -> T {
        f(&self.entries.read())
    }

    /// Replaces a model's entry; returns the previous one.
    pub fn replace(&self, id: &ModelId, entry: ModelEntry) -> Option<ModelEntry> {
        self.entries.write().insert(id.clone(), entry)
    }

    /// The entry of `id`, cloned.
    pub fn get(&self, id: &ModelId) -> Option<ModelEntry> {
        self.entries.read().get(id).cloned()
    }

    /// Sets one version's status while it loads or unloads.
    pub fn set_status(&self, id: &ModelId, status: VersionStatus) {
        let mut entries = self.entries.write();
        let entry = entries.entry(id.clone()).or_default();
        let model = entry
            .versions
            .get(&status.version)
            .and_then(|s| s.model.clone());
        entry
            .versions
            .insert(status.version, VersionSlot { status, model });
    }

    /// Makes `id` unavailable with `reason`; returns its entry as it was,
    /// or `None` if it is not known.
    pub fn mark_unavailable(&self, id: &ModelId, reason: &str) -> Option<ModelEntry> {
        let mut entries = self.entries.write();
        let entry = entries.get_mut(id)?;
        let unavailable = entry.unavailable(reason);
        Some(std::mem::replace(entry, unavailable))
    }

    /// Changes the entry of `id`, if there is one.
    pub fn update(&self, id: &ModelId, change: impl FnOnce(&mut ModelEntry)) {
        if let Some(entry) = self.entries.write().get_mut(id) {
            change(entry);
        }
    }

    /// Takes every entry out, for shutdown.
    pub fn take_all(&self) -> Entries {
        std::mem::take(&mut *self.entries.write())
    }
}
