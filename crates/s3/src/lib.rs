//! Model repositories in S3 and S3-compatible stores (`s3://bucket/path`,
//! `s3://host:port/bucket/path`, `s3://https://host:port/bucket/path`).
//! The server core reads local folders only: each `s3://` repository maps
//! to a folder of a local cache, which [`S3Sync`] (the core's
//! [`RepositorySync`]) brings up to date before each look at it.

mod credentials;
mod failure;
mod location;
mod mirror;
mod profile_file;
mod repository;
mod store;

use std::{path::PathBuf, sync::Arc};

use oxiserve_core::RepositorySync;

pub use location::S3Location;

use crate::{credentials::AwsEnv, mirror::Mirror, repository::S3Repository};

/// The repositories as local folders, and the sync that fills those of S3.
#[derive(Debug)]
pub struct Localized {
    /// The given repositories, `s3://` ones replaced by their cache folders.
    pub repositories: Vec<PathBuf>,
    /// `None` when no repository is in S3.
    pub sync: Option<Arc<S3Sync>>,
    /// The cache folder, deleted when dropped: keep it while serving.
    pub cache: Option<tempfile::TempDir>,
}

/// Maps `s3://` repositories to folders of a new local cache (in the
/// temporary folder, `TMPDIR`), with the credentials AWS's tools would use.
/// Nothing is downloaded yet: the first [`RepositorySync::sync`] does it.
pub fn localize(repositories: &[PathBuf]) -> Result<Localized, String> {
    let is_s3 = |p: &PathBuf| p.to_str().is_some_and(S3Location::is_s3);
    if !repositories.iter().any(is_s3) {
        return Ok(Localized {
            repositories: repositories.to_vec(),
            sync: None,
            cache: None,
        });
    }
    // The HTTPS client's TLS uses the process's crypto provider: ring's
    // (an error says one is already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let env = AwsEnv::from_process();
    let cache = tempfile::Builder::new()
        .prefix("oxiserve-s3-")
        .tempdir()
        .map_err(|e| format!("cannot create the S3 repository cache: {e}"))?;
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for (i, path) in repositories.iter().enumerate() {
        let Some(url) = path.to_str().filter(|p| S3Location::is_s3(p)) else {
            local.push(path.clone());
            continue;
        };
        let location = S3Location::parse(url)?;
        let settings = credentials::resolve(&env).map_err(|e| format!("{location}: {e}"))?;
        let (client, endpoint) = store::connect(&location, &settings, &env)?;
        let folder = cache.path().join(i.to_string());
        let mirror = Mirror::new(
            client,
            &location.prefix,
            folder.join("repository"),
            folder.join("staging"),
        )?;
        local.push(mirror.root().to_path_buf());
        remote.push(S3Repository::new(
            location,
            endpoint,
            settings.source,
            mirror,
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("s3-sync")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the S3 client: {e}"))?;
    Ok(Localized {
        repositories: local,
        sync: Some(Arc::new(S3Sync {
            repositories: remote,
            runtime,
        })),
        cache: Some(cache),
    })
}

/// Keeps the local copies of `s3://` repositories up to date.
#[derive(Debug)]
pub struct S3Sync {
    repositories: Vec<S3Repository>,
    /// Runs the requests; its own, so callers may be inside another runtime.
    runtime: tokio::runtime::Runtime,
}

impl RepositorySync for S3Sync {
    fn sync(&self) -> Result<(), String> {
        // A thread of its own: a runtime cannot block inside another one,
        // and the core calls from blocking tasks of the frontends' runtime.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    self.runtime.block_on(async {
                        for repository in &self.repositories {
                            repository.update().await?;
                        }
                        Ok(())
                    })
                })
                .join()
                .unwrap_or_else(|_| Err("the S3 repository sync panicked".into()))
        })
    }
}
