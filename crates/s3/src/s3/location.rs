//! `s3://` repository paths in Triton's three forms: `s3://bucket/path`,
//! `s3://host:port/bucket/path` (an S3-compatible store over HTTP) and
//! `s3://https://host:port/bucket/path`.

use std::fmt;

/// Where a model repository lives in an object store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// The store's URL when the path names one (`http://host:port`).
    pub endpoint: Option<String>,
    pub bucket: String,
    /// The key prefix of the repository, without leading or trailing `/`.
    pub prefix: String,
}

/// The scheme that marks a repository as S3's.
pub const SCHEME: &str = "s3://";

impl S3Location {
    /// Parses one of Triton's `s3://` forms.
    pub fn parse(path: &str) -> Result<Self, String> {
        let rest = path
            .strip_prefix(SCHEME)
            .ok_or_else(|| format!("{path}: not an s3:// path"))?;
        let (endpoint, rest) = match split_endpoint(rest) {
            Some((endpoint, rest)) => (Some(endpoint), rest),
            None => (None, rest),
        };
        let rest = rest.trim_matches('/');
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(format!(
                "{path}: no bucket (s3://bucket/path, s3://host:port/bucket/path or s3://https://host:port/bucket/path)"
            ));
        }
        Ok(Self {
            endpoint,
            bucket: bucket.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        })
    }
}

/// The endpoint part of `host:port/...`, `http://host:port/...` or
/// `https://host:port/...`, and what follows it.
fn split_endpoint(rest: &str) -> Option<(String, &str)> {
    for scheme in ["http://", "https://"] {
        if let Some(tail) = rest.strip_prefix(scheme) {
            let (host, rest) = tail.split_once('/').unwrap_or((tail, ""));
            return Some((format!("{scheme}{host}"), rest));
        }
    }
    let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
    // A bucket name has no ':'; a host does when it names its port.
    first
        .contains(':')
        .then(|| (format!("http://{first}"), tail))
}

impl fmt::Display for S3Location {
    /// `s3://bucket/prefix`, the repository as the bucket sees it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix.is_empty() {
            true => write!(f, "s3://{}", self.bucket),
            false => write!(f, "s3://{}/{}", self.bucket, self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(endpoint: Option<&str>, bucket: &str, prefix: &str) -> S3Location {
        S3Location {
            endpoint: endpoint.map(str::to_string),
            bucket: bucket.into(),
            prefix: prefix.into(),
        }
    }

    #[test]
    fn bucket_and_path() {
        assert_eq!(
            S3Location::parse("s3://models/a/b/").unwrap(),
            location(None, "models", "a/b")
        );
        assert_eq!(
            S3Location::parse("s3://models").unwrap(),
            location(None, "models", "")
        );
    }

    #[test]
    fn host_and_port_is_http() {
        assert_eq!(
            S3Location::parse("s3://127.0.0.1:9000/models/repo").unwrap(),
            location(Some("http://127.0.0.1:9000"), "models", "repo")
        );
    }

    #[test]
    fn explicit_scheme() {
        assert_eq!(
            S3Location::parse("s3://https://minio.local:9000/models/repo").unwrap(),
            location(Some("https://minio.local:9000"), "models", "repo")
        );
        assert_eq!(
            S3Location::parse("s3://http://minio:80/m").unwrap(),
            location(Some("http://minio:80"), "m", "")
        );
    }

    #[test]
    fn no_bucket_is_an_error() {
        for path in ["s3://", "s3:///", "s3://host:9000/", "s3://https://host:1"] {
            let error = S3Location::parse(path).unwrap_err();
            assert!(error.contains("no bucket"), "{path}: {error}");
        }
    }

    #[test]
    fn displays_as_the_bucket_sees_it() {
        let parsed = S3Location::parse("s3://h:1/b/p/q").unwrap();
        assert_eq!(parsed.to_string(), "s3://b/p/q");
    }
}
