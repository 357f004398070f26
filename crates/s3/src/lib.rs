//! Model repositories in object stores, in Triton's forms: Amazon S3 and
//! S3-compatible stores (`s3://bucket/path`, `s3://host:port/bucket/path`,
//! `s3://https://host:port/bucket/path`), Google Cloud Storage
//! (`gs://bucket/path`) and Azure Blob Storage (`as://account/container/path`).
//! The server core reads local folders only: each remote repository maps
//! to a folder of a local cache, which [`RemoteSync`] (the core's
//! [`RepositorySync`]) brings up to date before each look at it.

mod azure;
mod client;
mod env;
mod failure;
mod gcs;
mod location;
mod mirror;
mod repository;
mod s3;
mod store;

use std::{path::PathBuf, sync::Arc};

use oxiserve_core::RepositorySync;

use crate::{env::Env, location::Location, mirror::Mirror, repository::RemoteRepository};

/// The repositories as local folders, and the sync that fills the remote ones.
#[derive(Debug)]
pub struct Localized {
    /// The given repositories, remote ones replaced by their cache folders.
    pub repositories: Vec<PathBuf>,
    /// `None` when every repository is local.
    pub sync: Option<Arc<RemoteSync>>,
    /// The cache folder, deleted when dropped: keep it while serving.
    pub cache: Option<tempfile::TempDir>,
}

/// Maps remote repositories to folders of a new local cache (in the
/// temporary folder, `TMPDIR`), each with the credentials its cloud's tools
/// would use. Nothing is downloaded yet: the first [`RepositorySync::sync`]
/// does it.
pub fn localize(repositories: &[PathBuf]) -> Result<Localized, String> {
    let locations: Vec<Option<Location>> = repositories
        .iter()
        .map(|path| path.to_str().and_then(Location::of).transpose())
        .collect::<Result<_, _>>()?;
    if locations.iter().all(Option::is_none) {
        return Ok(Localized {
            repositories: repositories.to_vec(),
            sync: None,
            cache: None,
        });
    }
    // The HTTPS client's TLS uses the process's crypto provider: ring's
    // (an error says one is already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let env = Env::from_process();
    let cache = tempfile::Builder::new()
        .prefix("oxiserve-repositories-")
        .tempdir()
        .map_err(|e| format!("cannot create the remote repository cache: {e}"))?;
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for (i, (path, location)) in repositories.iter().zip(locations).enumerate() {
        let Some(location) = location else {
            local.push(path.clone());
            continue;
        };
        let connection = store::connect(&location, &env)?;
        let folder = cache.path().join(i.to_string());
        let mirror = Mirror::new(
            connection.store.clone(),
            location.prefix(),
            folder.join("repository"),
            folder.join("staging"),
        )?;
        local.push(mirror.root().to_path_buf());
        remote.push(RemoteRepository::new(location, connection, mirror));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("repository-sync")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the object store client: {e}"))?;
    Ok(Localized {
        repositories: local,
        sync: Some(Arc::new(RemoteSync {
            repositories: remote,
            runtime,
        })),
        cache: Some(cache),
    })
}

/// Keeps the local copies of remote repositories up to date.
#[derive(Debug)]
pub struct RemoteSync {
    repositories: Vec<RemoteRepository>,
    /// Runs the requests; its own, so callers may be inside another runtime.
    runtime: tokio::runtime::Runtime,
}

impl RepositorySync for RemoteSync {
    /// Updates every copy, each whatever the others' fate (a failed one
    /// keeps its last state); the error names each that failed.
    fn sync(&self) -> Result<(), String> {
        // A thread of its own: a runtime cannot block inside another one,
        // and the core calls from blocking tasks of the frontends' runtime.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    self.runtime.block_on(async {
                        let mut errors = Vec::new();
                        for repository in &self.repositories {
                            if let Err(e) = repository.update().await {
                                errors.push(e);
                            }
                        }
                        match errors.is_empty() {
                            true => Ok(()),
                            false => Err(errors.join("; ")),
                        }
                    })
                })
                .join()
                .unwrap_or_else(|_| Err("the remote repository sync panicked".into()))
        })
    }
}
