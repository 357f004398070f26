//! Triton's instance update: a reload whose configuration differs from the
//! loaded one only in `instance_group`, and whose other files did not
//! change, adds and removes instances of the loaded versions in place. The
//! instances that stay are neither finalized nor created again, and
//! requests keep flowing meanwhile.

use std::sync::Arc;

use oxiserve_config::only_instance_groups_differ;

use super::{ModelManager, install::Origin, table::ModelEntry};
use crate::repository::{Fingerprint, ModelSpec};

impl ModelManager {
    /// The entry of `spec` made from `previous` by an instance update, or
    /// `None` when the change needs a reload. `Some(Err)` says why the
    /// update failed; the table then still holds `previous`.
    pub(super) fn update_instances(
        &self,
        previous: &ModelEntry,
        spec: &ModelSpec,
        origin: &Origin,
    ) -> Option<Result<ModelEntry, String>> {
        let old_config = previous.config.as_deref()?;
        let files = Fingerprint::split(&spec.dir.path)?;
        let old_files = previous.files?;
        let same_versions = previous.versions.len() == spec.versions.len()
            && spec
                .versions
                .iter()
                .all(|v| previous.ready(Some(v.version)).is_some());
        let applies = origin.folder.is_none()
            && previous.folder.is_none()
            && previous.failure.is_none()
            && same_versions
            && previous.loaded().all(|m| m.can_update_instances())
            && files.others == old_files.others
            && (files.config != old_files.config || origin.config_given)
            && only_instance_groups_differ(old_config, &spec.config);
        if !applies {
            return None;
        }
        let config = Arc::new(spec.config.clone());
        let mut entry = ModelEntry {
            config: Some(config.clone()),
            files: Some(files),
            explicit: origin.explicit || previous.explicit,
            ..previous.clone()
        };
        for slot in entry.versions.values_mut() {
            let Some(model) = &slot.model else { continue };
            match model.with_instance_groups(config.clone()) {
                Ok(updated) => slot.model = Some(Arc::new(updated)),
                Err(e) => {
                    log::error!(
                        "instance update of '{}' failed: {}",
                        spec.config.name,
                        e.message
                    );
                    return Some(Err(e.message));
                }
            }
        }
        log::info!(
            "updated the instances of '{}' in place (only instance_group changed)",
            spec.config.name
        );
        Some(Ok(entry))
    }
}
