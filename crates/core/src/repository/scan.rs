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
    options::ScanOptions,
};

/// Everything a scan found, models sorted by name.
#[derive(Debug, Clone, Default)]
pub struct RepositoryScan {
    pub models: Vec<ScannedModel>,
    /// Problems with the repositories themselves (a missing folder).
    pub repository_errors: Vec<String>,
}

/// Reads every model folder of `repositories`. A model in two repositories is
/// an error for that model, as in Triton; other models are unaffected.
pub fn scan(repositories: &[PathBuf], options: &ScanOptions) -> RepositoryScan {
    let mut result = RepositoryScan::default();
    let mut found: BTreeMap<String, Vec<ModelDir>> = BTreeMap::new();
    for repository in repositories {
        match model_dirs(repository) {
            Ok(dirs) => {
                for dir in dirs {
                    found.entry(dir.name.clone()).or_default().push(dir);
                }
            }
            Err(e) => result.repository_errors.push(e),
        }
    }
    if let Some(o) = &options.model_override
        && let Some(folder) = &o.folder
    {
        let dir = ModelDir {
            name: o.name.clone(),
            path: folder.clone(),
            repository: folder.parent().unwrap_or(folder).to_path_buf(),
        };
        found.insert(o.name.clone(), vec![dir]);
    }
    let wanted = |name: &str| {
        options
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|m| m == "*" || m == name))
    };
    for (name, dirs) in &found {
        if !wanted(name) {
            continue;
        }
        result.models.push(match dirs.as_slice() {
            [dir] => read_model(dir, options),
            _ => ScannedModel {
                name: name.clone(),
                path: Some(dirs[0].path.clone()),
                outcome: Err(vec![ConfigError::whole(format!(
                    "model '{name}' exists in more than one model repository: {}",
                    dirs.iter()
                        .map(|d| d.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))]),
                poll: FolderPoll::NotUnique,
            },
        });
    }
    for name in options.only.iter().flatten() {
        if name != "*" && !found.contains_key(name) {
            result.models.push(ScannedModel {
                name: name.clone(),
                path: None,
                outcome: Err(vec![ConfigError::whole(format!(
                    "model not found in any model repository{}",
                    oxiserve_config::did_you_mean(name, found.keys().map(String::as_str))
                ))]),
                poll: FolderPoll::Failed,
            });
        }
    }
    // Members an ensemble was read without (explicit mode) are read to check it.
    let unread: Vec<ScannedModel> = ensemble_members(&result.models)
        .into_iter()
        .filter(|name| !result.models.iter().any(|m| m.name == *name))
        .filter_map(|name| match found.get(name.as_str())?.as_slice() {
            [dir] => Some(read_model(dir, options)),
            _ => None,
        })
        .collect();
    check_ensembles(
        &mut result.models,
        &unread,
        &found.keys().map(String::as_str).collect::<Vec<_>>(),
    );
    result.models.sort_by(|a, b| a.name.cmp(&b.name));
    result
}

/// The model folders of one repository. Hidden folders (`.git`,
/// `.ipynb_checkpoints`) are skipped; plain files are ignored as in Triton.
pub(super) fn model_dirs(repository: &Path) -> Result<Vec<ModelDir>, String> {
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
        });
    }
    Ok(dirs)
}
