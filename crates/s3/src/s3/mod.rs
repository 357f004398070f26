//! Amazon S3 and S3-compatible stores (`s3://`): the client for one
//! repository, with its endpoint, bucket, credentials and the `AWS_*`
//! settings of the environment.

mod credentials;
pub mod location;
mod profile_file;

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};

use crate::{
    client::{self, Connection},
    env::Env,
};
use credentials::Signing;
use location::S3Location;

/// AWS's region when none is configured.
const DEFAULT_REGION: &str = "us-east-1";

/// A client for `location`'s bucket, with the credentials AWS's tools would use.
pub fn connect(location: &S3Location, env: &Env) -> Result<Connection, String> {
    let settings = credentials::resolve(env).map_err(|e| format!("{location}: {e}"))?;
    let mut builder = AmazonS3Builder::new();
    for (name, value) in env.with_prefix("AWS_") {
        if let Ok(key) = name.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            builder = builder.with_config(key, value);
        }
    }
    let region = settings.region.as_deref().unwrap_or(DEFAULT_REGION);
    let endpoint = location
        .endpoint
        .as_deref()
        .or_else(|| env.get("AWS_ENDPOINT_URL_S3"))
        .or_else(|| env.get("AWS_ENDPOINT_URL"))
        .map(str::to_string);
    let shown = endpoint
        .clone()
        .unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"));
    builder = builder
        .with_bucket_name(&location.bucket)
        .with_region(region)
        .with_retry(client::retry())
        .with_client_options(client::options(&shown));
    if let Some(endpoint) = &endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    builder = match &settings.signing {
        Signing::Keys { id, secret, token } => {
            let builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret);
            match token {
                Some(token) => builder.with_token(token),
                None => builder,
            }
        }
        Signing::Fetched => builder,
        Signing::Anonymous => builder.with_skip_signature(true),
    };
    let store = builder
        .build()
        .map_err(|e| format!("{location}: bad S3 settings: {e}"))?;
    Ok(Connection {
        store: Arc::new(store),
        endpoint: shown,
        credentials: settings.source,
    })
}
