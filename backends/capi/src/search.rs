//! Where a model's backend library is looked for, in Triton's order: the
//! model's version folder, the model's folder, then
//! `<--backend-directory>/<backend>/`; the file is `libtriton_<backend>.so`,
//! or the configuration's `runtime`.

use std::path::{Component, Path, PathBuf};

use oxiserve_backend::BackendQuery;
use oxiserve_types::{Error, Result};

/// The library file a backend's models use: `runtime` when the
/// configuration sets one, else `libtriton_<backend>.so`.
pub fn library_file(query: &BackendQuery<'_>) -> String {
    if query.runtime.is_empty() {
        format!("libtriton_{}.so", query.backend)
    } else {
        query.runtime.to_string()
    }
}

/// The folders searched, first match wins.
pub fn search_folders(query: &BackendQuery<'_>, backend_directory: &Path) -> Vec<PathBuf> {
    query
        .version_path
        .map(Path::to_path_buf)
        .into_iter()
        .chain([
            query.model_path.to_path_buf(),
            backend_directory.join(query.backend),
        ])
        .collect()
}

/// The library of the model `query` describes; Triton's errors when it is
/// missing or `runtime` reaches outside the folders.
pub fn find_library(query: &BackendQuery<'_>, backend_directory: &Path) -> Result<PathBuf> {
    let file = library_file(query);
    let folders = search_folders(query, backend_directory);
    if escapes(&file) {
        let folder = folders
            .first()
            .map_or(String::new(), |f| f.display().to_string());
        return Err(Error::invalid_arg(format!(
            "backend library name '{file}' escapes backend directory '{folder}', for model '{}', \
             check model config runtime field",
            query.model_name
        )));
    }
    if let Some(found) = folders.iter().map(|f| f.join(&file)).find(|p| p.is_file()) {
        return Ok(found);
    }
    let searched: String = folders
        .iter()
        .map(|f| format!("'{}' ", f.display()))
        .collect();
    Err(Error::invalid_arg(if query.runtime.is_empty() {
        // Triton's words, then where it looked.
        format!(
            "unable to find backend library for backend '{}', try specifying runtime on the \
             model configuration. Searched for {file} in: {}",
            query.backend,
            searched.trim_end()
        )
    } else {
        format!(
            "unable to find backend library '{file}' for model '{}', searched: {searched}",
            query.model_name
        )
    }))
}

/// Whether the file name `file` leads out of the folder it is joined to.
fn escapes(file: &str) -> bool {
    Path::new(file)
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn query<'a>(model: &'a Path, version: Option<&'a Path>, runtime: &'a str) -> BackendQuery<'a> {
        BackendQuery {
            backend: "custom",
            runtime,
            model_name: "m",
            model_path: model,
            version_path: version,
        }
    }

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, b"").unwrap();
    }

    #[test]
    fn the_version_folder_then_the_model_folder_then_the_backend_directory() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("repo/m");
        let version = model.join("1");
        let backends = dir.path().join("backends");
        fs::create_dir_all(&version).unwrap();
        let q = query(&model, Some(&version), "");
        assert!(find_library(&q, &backends).is_err());
        touch(&backends.join("custom/libtriton_custom.so"));
        assert_eq!(
            find_library(&q, &backends).unwrap(),
            backends.join("custom/libtriton_custom.so")
        );
        touch(&model.join("libtriton_custom.so"));
        assert_eq!(
            find_library(&q, &backends).unwrap(),
            model.join("libtriton_custom.so")
        );
        touch(&version.join("libtriton_custom.so"));
        assert_eq!(
            find_library(&q, &backends).unwrap(),
            version.join("libtriton_custom.so")
        );
    }

    #[test]
    fn a_missing_library_is_reported_as_triton_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m");
        let err = find_library(&query(&model, None, ""), dir.path()).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "unable to find backend library for backend 'custom', try specifying runtime on \
                 the model configuration. Searched for libtriton_custom.so in: '{}' '{}'",
                model.display(),
                dir.path().join("custom").display()
            )
        );
        let err = find_library(&query(&model, None, "libmine.so"), dir.path()).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "unable to find backend library 'libmine.so' for model 'm', searched: '{}' '{}' ",
                model.display(),
                dir.path().join("custom").display()
            )
        );
    }

    #[test]
    fn runtime_names_the_file_and_may_not_leave_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m");
        touch(&model.join("libmine.so"));
        let q = query(&model, None, "libmine.so");
        assert_eq!(
            find_library(&q, dir.path()).unwrap(),
            model.join("libmine.so")
        );
        let err = find_library(&query(&model, None, "../libmine.so"), dir.path()).unwrap_err();
        assert!(err.message.contains("escapes backend directory"), "{err}");
    }
}
