//! The S3 client for one repository: its endpoint, bucket, credentials and
//! the `AWS_*` settings of the environment.

use std::{sync::Arc, time::Duration};

use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, RetryConfig,
    aws::{AmazonS3Builder, AmazonS3ConfigKey},
};

use crate::{
    credentials::{AwsEnv, AwsSettings, Signing},
    location::S3Location,
};

/// AWS's region when none is configured.
const DEFAULT_REGION: &str = "us-east-1";

/// A client for `location`'s bucket, and the endpoint it talks to (for messages).
pub fn connect(
    location: &S3Location,
    settings: &AwsSettings,
    env: &AwsEnv,
) -> Result<(Arc<dyn ObjectStore>, String), String> {
    let mut builder = AmazonS3Builder::new();
    for (name, value) in env.aws_vars() {
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
    builder = builder
        .with_bucket_name(&location.bucket)
        .with_region(region)
        .with_retry(retry())
        .with_client_options(
            // No limit on a whole request (a large model downloads for
            // long); one on each wait for bytes.
            ClientOptions::new()
                .with_connect_timeout(Duration::from_secs(5))
                .with_timeout_disabled()
                .with_read_timeout(Duration::from_secs(30))
                .with_allow_http(
                    endpoint
                        .as_deref()
                        .is_some_and(|e| e.starts_with("http://")),
                ),
        );
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
    let shown = endpoint.unwrap_or_else(|| format!("https://s3.{region}.amazonaws.com"));
    Ok((Arc::new(store), shown))
}

/// Few, quick retries: a wrong endpoint fails start-up in seconds.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
        },
        max_retries: 2,
        retry_timeout: Duration::from_secs(15),
    }
}
