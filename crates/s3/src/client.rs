//! What every cloud's client shares: its HTTP settings and retries, and the
//! connection it makes.

use std::{sync::Arc, time::Duration};

use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

/// A client for one repository's bucket or container, and what error
/// messages say about it.
#[derive(Debug)]
pub struct Connection {
    pub store: Arc<dyn ObjectStore>,
    /// The endpoint the client talks to.
    pub endpoint: String,
    /// Where the credentials came from.
    pub credentials: String,
}

/// HTTP settings: no limit on a whole request (a large model downloads for
/// long), one on each wait for bytes; plain HTTP only to an `http://` endpoint.
pub fn options(endpoint: &str) -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout_disabled()
        .with_read_timeout(Duration::from_secs(30))
        .with_allow_http(endpoint.starts_with("http://"))
}

/// Few, quick retries: a wrong endpoint fails start-up in seconds.
pub fn retry() -> RetryConfig {
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
