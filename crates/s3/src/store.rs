//! Connects to a remote repository's store, whichever cloud it is in.

use crate::{azure, client::Connection, env::Env, gcs, location::Location, s3};

/// A client for `location`, with the credentials its cloud's tools would
/// use; the error names the repository.
pub fn connect(location: &Location, env: &Env) -> Result<Connection, String> {
    match location {
        Location::S3(l) => s3::connect(l, env),
        Location::Gcs(l) => gcs::connect(l, env),
        Location::Azure(l) => azure::connect(l, env),
    }
}
