//! Google Cloud Storage (`gs://`): the client for one repository's bucket,
//! with the credentials Google's tools would use.

mod credentials;
pub mod location;

use std::sync::Arc;

use object_store::{
    StaticCredentialProvider,
    gcp::{GcpCredential, GoogleCloudStorageBuilder},
};

use crate::{
    client::{self, Connection},
    env::Env,
};
use credentials::Auth;
use location::GcsLocation;

/// Google's endpoint.
const GOOGLE: &str = "https://storage.googleapis.com";

/// A client for `location`'s bucket.
pub fn connect(location: &GcsLocation, env: &Env) -> Result<Connection, String> {
    let settings = credentials::resolve(env, credentials::on_google_cloud(env))
        .map_err(|e| format!("{location}: {e}"))?;
    let endpoint = settings.emulator.as_deref().unwrap_or(GOOGLE);
    let mut builder = GoogleCloudStorageBuilder::new()
        .with_bucket_name(&location.bucket)
        .with_retry(client::retry())
        .with_client_options(client::options(endpoint));
    if settings.emulator.is_some() {
        builder = builder.with_base_url(endpoint);
    }
    builder = match &settings.auth {
        Auth::File(path) => builder.with_application_credentials(path.display().to_string()),
        // With no credentials file, the client asks the metadata server.
        Auth::Metadata => builder,
        Auth::Anonymous => builder.with_skip_signature(true).with_credentials(Arc::new(
            StaticCredentialProvider::new(GcpCredential {
                bearer: String::new(),
            }),
        )),
    };
    let store = builder
        .build()
        .map_err(|e| format!("{location}: bad GCS settings: {e}"))?;
    Ok(Connection {
        store: Arc::new(store),
        endpoint: endpoint.to_string(),
        credentials: settings.source,
    })
}
