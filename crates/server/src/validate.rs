//! `oxiserve validate DIR...`: reads repositories (folders, `s3://`, `gs://` or `as://`) as
//! `serve` would and prints every problem with its file, line and column,
//! then has each model's backend check its files against the configuration
//! (an ONNX model's real inputs and outputs). Exits 1 when any problem is
//! found.

use std::{path::PathBuf, process::ExitCode, sync::Arc};

use oxiserve_backend::{BackendQuery, ModelContext, NoHost};
use oxiserve_backend_capi::CapiSettings;
use oxiserve_core::{
    BackendRegistry, RepositorySync,
    repository::{ModelSpec, ScanOptions, scan},
};
use oxiserve_s3::Localized;

use crate::server_config;

/// Checks `repositories` and reports on standard output.
pub fn run(repositories: &[PathBuf]) -> ExitCode {
    let backends = match server_config::backends(&[], CapiSettings::default()) {
        Ok(backends) => backends,
        Err(message) => {
            println!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    // Holds the cache of remote repositories until the checks are done.
    let localized = match local_copies(repositories) {
        Ok(localized) => localized,
        Err(message) => {
            println!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let scan = scan(
        &localized.repositories,
        &ScanOptions {
            auto_complete: true,
            backends: Some(backends.clone()),
            ..Default::default()
        },
    );
    let mut problems = scan.repository_errors.len();
    for error in &scan.repository_errors {
        println!("error: {error}");
    }
    for model in &scan.models {
        match &model.outcome {
            Ok(spec) => {
                let found = backend_problems(&backends, spec);
                problems += found.len();
                for error in &found {
                    println!("error: {}: {error}", model.id);
                }
                if !found.is_empty() {
                    continue;
                }
                let versions: Vec<String> = spec
                    .versions
                    .iter()
                    .map(|v| v.version.to_string())
                    .collect();
                let kind = if spec.config.backend.is_empty() {
                    &spec.config.platform
                } else {
                    &spec.config.backend
                };
                println!("ok: {} ({kind}, version {})", model.id, versions.join(", "));
            }
            Err(errors) => {
                problems += errors.len();
                for error in errors {
                    println!("error: {}: {error}", model.id);
                }
            }
        }
    }
    let models = scan.models.len();
    if problems == 0 {
        println!("{models} model(s) checked, no problems");
        ExitCode::SUCCESS
    } else {
        println!("{models} model(s) checked, {problems} problem(s)");
        ExitCode::FAILURE
    }
}

/// The repositories as local folders, remote ones downloaded.
fn local_copies(repositories: &[PathBuf]) -> Result<Localized, String> {
    let localized = oxiserve_s3::localize(repositories)?;
    if let Some(sync) = &localized.sync {
        sync.sync()?;
    }
    Ok(localized)
}

/// What the model's backend finds wrong with each version's files (or why
/// the backend a version needs cannot load).
fn backend_problems(backends: &BackendRegistry, spec: &ModelSpec) -> Vec<String> {
    let config = Arc::new(spec.config.clone());
    spec.versions
        .iter()
        .filter_map(|version| {
            let query = BackendQuery {
                backend: &config.backend,
                runtime: &config.runtime,
                model_name: &spec.dir.name,
                model_path: &spec.dir.path,
                version_path: Some(&version.path),
            };
            let backend = match backends.get(&query) {
                Ok(backend) => backend?,
                Err(e) => return Some(format!("version {}: {}", version.version, e.message)),
            };
            let context = ModelContext {
                name: spec.dir.name.clone(),
                version: version.version,
                config: config.clone(),
                model_path: spec.dir.path.clone(),
                version_path: version.path.clone(),
                host: Arc::new(NoHost),
            };
            backend
                .check(&context)
                .err()
                .map(|e| format!("version {}: {}", version.version, e.message))
        })
        .collect()
}
