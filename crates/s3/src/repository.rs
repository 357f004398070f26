//! One `s3://` model repository: its local copy, and errors that say which
//! part is wrong (endpoint, bucket, credentials or path).

use tokio::sync::Mutex;

use crate::{
    failure::Failure,
    location::S3Location,
    mirror::{Mirror, MirrorError},
};

/// A repository in an object store and its local copy.
#[derive(Debug)]
pub struct S3Repository {
    location: S3Location,
    /// The endpoint the client talks to.
    endpoint: String,
    /// Where the credentials came from.
    credentials: String,
    mirror: Mutex<Mirror>,
}

impl S3Repository {
    pub fn new(
        location: S3Location,
        endpoint: String,
        credentials: String,
        mirror: Mirror,
    ) -> Self {
        Self {
            location,
            endpoint,
            credentials,
            mirror: Mutex::new(mirror),
        }
    }

    /// Brings the local copy up to date; the error says what is wrong.
    pub async fn update(&self) -> Result<(), String> {
        let mut mirror = self.mirror.lock().await;
        let (downloaded, removed) = mirror.update().await.map_err(|e| self.message(e))?;
        if downloaded + removed > 0 {
            log::info!(
                "{}: {downloaded} file(s) downloaded, {removed} removed",
                self.location
            );
        }
        Ok(())
    }

    fn message(&self, error: MirrorError) -> String {
        let Self {
            location,
            endpoint,
            credentials,
            ..
        } = self;
        match error {
            MirrorError::NoModelFolders => format!(
                "no model folders under {location} (at {endpoint}): the bucket exists, check the path"
            ),
            MirrorError::Local(e) => format!("cannot write the local copy of {location}: {e}"),
            MirrorError::Store(e) => match Failure::of(&e) {
                Failure::Endpoint(detail) => {
                    format!("S3 endpoint {endpoint} cannot be reached for {location}: {detail}")
                }
                Failure::Bucket(detail) => format!(
                    "S3 bucket '{}' does not exist at {endpoint} ({detail})",
                    location.bucket
                ),
                Failure::Credentials(detail) => format!(
                    "S3 at {endpoint} rejected the credentials from {credentials} for {location}: {detail}"
                ),
                Failure::Other(detail) => format!("{location} at {endpoint}: {detail}"),
            },
        }
    }
}
