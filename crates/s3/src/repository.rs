//! One remote model repository: its local copy, and errors that say which
//! part is wrong (endpoint, bucket or container, credentials or path).

use tokio::sync::Mutex;

use crate::{
    client::Connection,
    failure::Failure,
    location::Location,
    mirror::{Mirror, MirrorError},
};

/// A repository in an object store and its local copy.
#[derive(Debug)]
pub struct RemoteRepository {
    location: Location,
    /// The endpoint the client talks to.
    endpoint: String,
    /// Where the credentials came from.
    credentials: String,
    mirror: Mutex<Mirror>,
}

impl RemoteRepository {
    /// The repository at `location`, copied by `mirror` through `connection`'s client.
    pub fn new(location: Location, connection: Connection, mirror: Mirror) -> Self {
        Self {
            location,
            endpoint: connection.endpoint,
            credentials: connection.credentials,
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
        let service = location.service();
        match error {
            MirrorError::NoModelFolders => format!(
                "no model folders under {location} (at {endpoint}): the {} exists, check the path",
                location.bucket()
            ),
            MirrorError::Local(e) => format!("cannot write the local copy of {location}: {e}"),
            MirrorError::Store(e) => match Failure::of(&e) {
                Failure::Endpoint(detail) => format!(
                    "{service} endpoint {endpoint} cannot be reached for {location}: {detail}"
                ),
                Failure::Bucket(detail) => format!(
                    "{} does not exist at {endpoint} ({detail})",
                    location.bucket()
                ),
                Failure::Credentials(detail) => format!(
                    "{service} at {endpoint} rejected the credentials from {credentials} for {location}: {detail}"
                ),
                Failure::Other(detail) => format!("{location} at {endpoint}: {detail}"),
            },
        }
    }
}
