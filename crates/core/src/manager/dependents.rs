//! Ensembles follow their members, as in Triton: unloading a model takes the
//! loaded ensembles that have it as a step out of service with it, and
//! loading it again brings them back.

use super::{ModelManager, install::Origin, members, table::UNLOADED};
use crate::repository::scan;

impl ModelManager {
    /// Takes out of service the loaded ensembles with a step on `member`
    /// (and the ensembles using those), to come back with it.
    pub(super) fn take_out_users(&self, member: &str) {
        let users: Vec<String> = self.inner.models.read(|models| {
            models
                .iter()
                .filter(|(_, entry)| entry.loaded().next().is_some())
                .filter(|(_, entry)| {
                    entry
                        .config
                        .as_deref()
                        .is_some_and(|c| members::config_members(c).contains(&member))
                })
                .map(|(name, _)| name.clone())
                .collect()
        });
        for user in users {
            log::info!("unloading '{user}': its step '{member}' was unloaded");
            self.take_out(&user, UNLOADED);
            self.inner
                .models
                .update(&user, |entry| entry.awaits_members = true);
            self.take_out_users(&user);
        }
    }

    /// Loads again the ensembles that [`ModelManager::take_out_users`] took
    /// out with `member`, once every member of theirs is ready.
    pub(super) fn bring_back_users(&self, member: &str) {
        let waiting: Vec<(String, Vec<String>)> = self.inner.models.read(|models| {
            models
                .iter()
                .filter(|(_, entry)| entry.awaits_members && entry.loaded().next().is_none())
                .filter_map(|(name, entry)| {
                    let steps = members::config_members(entry.config.as_deref()?);
                    steps
                        .contains(&member)
                        .then(|| (name.clone(), steps.into_iter().map(String::from).collect()))
                })
                .collect()
        });
        // (Outside the table's lock: a lookup takes it again.)
        for (user, steps) in waiting {
            if !steps.iter().all(|step| self.model_ready(step, None)) {
                continue;
            }
            let found = scan(
                &self.config().repositories,
                &self.scan_options(Some(vec![user.clone()])),
            );
            let Some(model) = found
                .models
                .into_iter()
                .find(|m| m.name == user && m.path.is_some())
            else {
                continue;
            };
            log::info!("loading '{user}' again: its step '{member}' is back");
            let entry = self.install(model, Origin::default());
            if entry.loaded().next().is_some() {
                self.bring_back_users(&user);
            }
        }
    }
}
