//! `gs://bucket/path` repository paths, as Triton reads them.

use std::fmt;

/// Where a model repository lives in Google Cloud Storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsLocation {
    pub bucket: String,
    /// The object prefix of the repository, without leading or trailing `/`.
    pub prefix: String,
}

/// The scheme that marks a repository as Google Cloud Storage's.
pub const SCHEME: &str = "gs://";

impl GcsLocation {
    /// Parses `gs://bucket` or `gs://bucket/path`.
    pub fn parse(path: &str) -> Result<Self, String> {
        let rest = path
            .strip_prefix(SCHEME)
            .ok_or_else(|| format!("{path}: not a gs:// path"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(format!("{path}: no bucket (gs://bucket/path)"));
        }
        Ok(Self {
            bucket: bucket.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        })
    }
}

impl fmt::Display for GcsLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix.is_empty() {
            true => write!(f, "{SCHEME}{}", self.bucket),
            false => write!(f, "{SCHEME}{}/{}", self.bucket, self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_and_path() {
        let parsed = GcsLocation::parse("gs://models/a/b/").unwrap();
        assert_eq!(
            (parsed.bucket.as_str(), parsed.prefix.as_str()),
            ("models", "a/b")
        );
        assert_eq!(parsed.to_string(), "gs://models/a/b");
        let bare = GcsLocation::parse("gs://models").unwrap();
        assert_eq!((bare.bucket.as_str(), bare.prefix.as_str()), ("models", ""));
        assert_eq!(bare.to_string(), "gs://models");
    }

    #[test]
    fn no_bucket_is_an_error() {
        for path in ["gs://", "gs:///models"] {
            let error = GcsLocation::parse(path).unwrap_err();
            assert!(error.contains("no bucket"), "{path}: {error}");
        }
    }
}
