//! Ensembles follow their members, as in Triton's dependency graph: when the
//! models of a name change (one is loaded, unloaded, appears or goes), each
//! loaded ensemble with a step of that name is taken out of service if a
//! step no longer finds a ready model, and loaded again, bound anew, if a
//! step now finds another model (with `--model-namespacing`, a copy in the
//! ensemble's own namespace appearing or going); an ensemble taken out comes
//! back once every step finds a ready model again.

use std::sync::Arc;

use oxiserve_proto::ModelConfig;

use super::{ModelManager, install::Origin, members, table::UNLOADED};
use crate::repository::{ModelId, scan};

impl ModelManager {
    /// Brings the ensembles with a step named `name` in line with the models
    /// of that name (and, in turn, the ensembles using those).
    pub(super) fn follow_members(&self, name: &str) {
        let users: Vec<(ModelId, Arc<ModelConfig>, bool)> = self.inner.models.read(|models| {
            models
                .iter()
                .filter_map(|(id, entry)| {
                    let loaded = entry.loaded().next().is_some();
                    let config = entry.config.clone()?;
                    let uses = members::config_members(&config).contains(&name);
                    (uses && !entry.removed && (loaded || entry.awaits_members))
                        .then(|| (id.clone(), config, loaded))
                })
                .collect()
        });
        // (Outside the table's lock: a lookup takes it again.)
        for (user, config, loaded) in users {
            let found = self.step_models(&user, &config);
            let ready = members::steps(&config)
                .iter()
                .zip(&found)
                .all(|(step, model)| {
                    model
                        .as_ref()
                        .is_some_and(|m| self.model_by_id(m, members::step_version(step)).is_ok())
                });
            let bound = members::bound_members(&config);
            let rebound = found.iter().zip(&bound).any(|(f, b)| f.as_ref() != Some(b));
            match (loaded, ready) {
                (true, false) => {
                    log::info!("unloading '{user}': its step '{name}' is not available");
                    // (An ensemble never asks itself: this cannot fail.)
                    let _ = self.take_out(&user, UNLOADED);
                    self.inner
                        .models
                        .update(&user, |entry| entry.awaits_members = true);
                    self.follow_members(&user.name);
                }
                (true, true) if rebound => {
                    log::info!("loading '{user}' again: its step '{name}' now finds another model");
                    self.reload(&user);
                }
                (false, true) => {
                    log::info!("loading '{user}' again: its step '{name}' is back");
                    if self.reload(&user) {
                        self.follow_members(&user.name);
                    }
                }
                _ => {}
            }
        }
    }

    /// Loads ensemble `id` again from its repository; returns whether a
    /// version of it is loaded.
    fn reload(&self, id: &ModelId) -> bool {
        let found = scan(
            &self.config().repositories,
            &self.scan_options(Some(vec![id.name.clone()])),
        );
        let Some(model) = found
            .models
            .into_iter()
            .find(|m| m.id == *id && m.path.is_some())
        else {
            return false;
        };
        let entry = self.install(model, Origin::default());
        entry.loaded().next().is_some()
    }
}
