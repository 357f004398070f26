//! A model archive of SageMaker's multi-model endpoint (the `url` of
//! `POST /models`), read as Triton reads it: the folder to register as a
//! repository, and the model folder in it that the load names.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::LazyLock,
};

use regex::Regex;

/// `/opt/ml/models/<hash>/model[/<folder>]`: where SageMaker unpacks archives.
static SAGEMAKER_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(/opt/ml/models/[0-9A-Za-z._]+)/(model)/?([0-9A-Za-z._]+)?$")
        .expect("a valid pattern")
});

/// An ensemble's configuration.
static ENSEMBLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"platform:\s*"ensemble""#).expect("a valid pattern"));

/// What to register and load for one archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Archive {
    /// The repository to register ("" when there is none to find).
    pub repository: String,
    /// The model folder in it that is loaded under the model's name.
    pub model_folder: String,
}

/// Reads the archive at `url`. With a `config.pbtxt` at its top, the
/// archive is the model folder itself: its parent is the repository (found
/// only in SageMaker's `/opt/ml/models/<hash>/model` layout). Otherwise
/// `url` is the repository and the model is its ensemble, if one of its
/// folders is, else its folder (the last by name when there are several).
pub(super) fn read_archive(url: &str) -> Archive {
    if Path::new(url).join("config.pbtxt").is_file() {
        let (repository, model_folder) = match SAGEMAKER_PATH.captures(url) {
            Some(parts) => (parts[1].to_string(), parts[2].to_string()),
            None => (String::new(), String::new()),
        };
        return Archive {
            repository,
            model_folder,
        };
    }
    let folders = model_folders(Path::new(url));
    let ensemble = folders
        .iter()
        .rev()
        .find(|folder| is_ensemble(&Path::new(url).join(folder)));
    Archive {
        repository: url.to_string(),
        model_folder: ensemble.or(folders.last()).cloned().unwrap_or_default(),
    }
}

/// The names of the folders in `repository`, sorted.
pub(super) fn model_folders(repository: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(repository) else {
        return Vec::new();
    };
    let mut folders: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    folders
}

/// The configuration of `folder` (its `config.pbtxt`) as JSON without its
/// name, for a load under another name: Triton loads an archive's model
/// under the name it is registered as, whatever its configuration says.
/// `None` without a configuration that parses (the load reports it).
pub(super) fn unnamed_config(folder: &Path) -> Option<String> {
    let file = folder.join("config.pbtxt");
    let text = fs::read_to_string(&file).ok()?;
    let mut config = oxiserve_config::parse_config(&text, &file).ok()?.config;
    config.name.clear();
    Some(oxiserve_config::to_json(&config).to_string())
}

fn is_ensemble(folder: &Path) -> bool {
    let config: PathBuf = folder.join("config.pbtxt");
    fs::read_to_string(config).is_ok_and(|text| ENSEMBLE.is_match(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(root: &Path, name: &str, config: &str) {
        fs::create_dir_all(root.join(name)).unwrap();
        fs::write(root.join(name).join("config.pbtxt"), config).unwrap();
    }

    #[test]
    fn an_archive_of_one_model_folder_loads_that_folder() {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().to_str().unwrap();
        model(dir.path(), "m", "backend: \"python\"");
        let archive = read_archive(url);
        assert_eq!(archive.repository, url);
        assert_eq!(archive.model_folder, "m");
    }

    #[test]
    fn an_archive_with_an_ensemble_loads_the_ensemble() {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), "a_ensemble", "platform: \"ensemble\"");
        model(dir.path(), "b_member", "backend: \"python\"");
        let archive = read_archive(dir.path().to_str().unwrap());
        assert_eq!(archive.model_folder, "a_ensemble");
    }

    #[test]
    fn the_configuration_loads_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), "m", "name: \"m\"\nbackend: \"python\"");
        let json = unnamed_config(&dir.path().join("m")).unwrap();
        let config = oxiserve_config::from_json(&json).unwrap();
        assert_eq!(
            (config.name.as_str(), config.backend.as_str()),
            ("", "python")
        );
        assert_eq!(unnamed_config(dir.path()), None);
    }

    #[test]
    fn a_model_folder_is_found_only_in_sagemakers_layout() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("config.pbtxt"), "").unwrap();
        let archive = read_archive(dir.path().to_str().unwrap());
        assert_eq!(archive.repository, "");
        let parts = SAGEMAKER_PATH.captures("/opt/ml/models/abc/model").unwrap();
        assert_eq!((&parts[1], &parts[2]), ("/opt/ml/models/abc", "model"));
    }
}
