//! Scanning model repositories: every model folder, read and checked.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
};

use oxiserve_config::ConfigError;

use super::{
    ensembles::{check_ensembles, ensemble_members},
    model_dir::{FolderPoll, ModelDir, ScannedModel, read_model},
    model_id::{ModelId, repository_namespace},
    options::ScanOptions,
};

/// Everything a scan found, models sorted by namespace, then name.
#[derive(Debug, Clone, Default)]
pub struct RepositoryScan {
    pub models: Vec<ScannedModel>,
    /// Problems with the repositories themselves (a missing folder).
    pub repository_errors: Vec<String>,
}

/// Reads every model folder of `repositories`. Without namespacing a model
/// in two repositories is an error for that model, as in Triton; other
/// models are unaffected. With namespacing each repository's copy is a model
/// of its own.
pub fn scan(repositories: &[PathBuf], options: &ScanOptions) -> RepositoryScan {
    let mut result = RepositoryScan::default();
    let mut found: BTreeMap<ModelId, Vec<ModelDir>> = BTreeMap::new();
    for repository in repositories {
        match model_dirs(repository, options.namespacing) {
            Ok(dirs) => {
                for dir in dirs {
                    found.entry(dir.id()).or_default().push(dir);
                }
            }
            Err(e) => result.repository_errors.push(e),
        }
    }
    if let Some(o) = &options.model_override
        && let Some(folder) = &o.folder
    {
        // The load request's files replace the model; as in Triton they are
        // in no namespace (the copies in the repositories are left as they are).
        found.retain(|id, _| id.name != o.name);
        let dir = ModelDir {
            name: o.name.clone(),
            path: folder.clone(),
            repository: folder.parent().unwrap_or(folder).to_path_buf(),
            namespace: String::new(),
        };
        found.insert(dir.id(), vec![dir]);
    }
    let wanted = |name: &str| {
        options
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|m| m == "*" || m == name))
    };
    for (id, dirs) in &found {
        if !wanted(&id.name) {
            continue;
        }
        result.models.push(match dirs.as_slice() {
            [dir] => read_model(dir, options),
            _ => ScannedModel {
                id: id.clone(),
                path: Some(dirs[0].path.clone()),
                outcome: Err(vec![ConfigError::whole(format!(
                    "model '{id}' exists in more than one model repository: {}",
                    dirs.iter()
                        .map(|d| d.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))]),
                poll: FolderPoll::NotUnique,
            },
        });
    }
    let names = || found.keys().map(|id| id.name.as_str());
    for name in options.only.iter().flatten() {
        if name != "*" && !names().any(|n| n == name) {
            result.models.push(ScannedModel {
                id: ModelId::new("", name),
                path: None,
                outcome: Err(vec![ConfigError::whole(format!(
                    "model not found in any model repository{}",
                    oxiserve_config::did_you_mean(name, names())
                ))]),
                poll: FolderPoll::Failed,
            });
        }
    }
    // Members an ensemble was read without (explicit mode) are read to check it.
    let ids: Vec<&ModelId> = found.keys().collect();
    let unread: Vec<ScannedModel> = ensemble_members(&result.models, &ids)
        .into_iter()
        .filter(|id| !result.models.iter().any(|m| m.id == *id))
        .filter_map(|id| match found.get(&id)?.as_slice() {
            [dir] => Some(read_model(dir, options)),
            _ => None,
        })
        .collect();
    check_ensembles(&mut result.models, &unread, &ids);
    result.models.sort_by(|a, b| a.id.cmp(&b.id));
    result
}

/// The model folders of one repository (its namespace with `namespacing`).
/// Hidden folders (`.git`, `.ipynb_checkpoints`) are skipped; plain files
/// are ignored as in Triton.
pub(super) fn model_dirs(repository: &Path, namespacing: bool) -> Result<Vec<ModelDir>, String> {
    let entries = fs::read_dir(repository).map_err(|e| {
        format!(
            "cannot read model repository '{}': {e}",
            repository.display()
        )
    })?;
    let mut dirs = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        dirs.push(ModelDir {
            name,
            path: entry.path(),
            repository: repository.to_path_buf(),
            namespace: repository_namespace(repository, namespacing),
        });
    }
    Ok(dirs)
}
