//! Remote repository paths: which store (`s3://`, `gs://`, `as://`) and
//! where in it; anything else is a local folder.

use std::fmt;

use crate::{azure::location::AzureLocation, gcs::location::GcsLocation, s3::location::S3Location};

/// Where a remote model repository lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    S3(S3Location),
    Gcs(GcsLocation),
    Azure(AzureLocation),
}

impl Location {
    /// The remote repository `path` names, `None` for a local folder; the
    /// error says how the path is malformed.
    pub fn of(path: &str) -> Option<Result<Self, String>> {
        use crate::{azure::location as azure, gcs::location as gcs, s3::location as s3};
        if path.starts_with(s3::SCHEME) {
            Some(S3Location::parse(path).map(Self::S3))
        } else if path.starts_with(gcs::SCHEME) {
            Some(GcsLocation::parse(path).map(Self::Gcs))
        } else if path.starts_with(azure::SCHEME) {
            Some(AzureLocation::parse(path).map(Self::Azure))
        } else {
            None
        }
    }

    /// The bucket or container, as messages name it: "S3 bucket 'b'".
    pub fn bucket(&self) -> String {
        match self {
            Self::S3(l) => format!("S3 bucket '{}'", l.bucket),
            Self::Gcs(l) => format!("GCS bucket '{}'", l.bucket),
            Self::Azure(l) => format!("Azure container '{}'", l.container),
        }
    }

    /// The store's name in messages.
    pub fn service(&self) -> &'static str {
        match self {
            Self::S3(_) => "S3",
            Self::Gcs(_) => "GCS",
            Self::Azure(_) => "Azure",
        }
    }

    /// The key prefix of the repository in its bucket or container.
    pub fn prefix(&self) -> &str {
        match self {
            Self::S3(l) => &l.prefix,
            Self::Gcs(l) => &l.prefix,
            Self::Azure(l) => &l.prefix,
        }
    }
}

impl fmt::Display for Location {
    /// The repository as its store sees it (`s3://bucket/prefix`,
    /// `gs://bucket/prefix`, `as://account/container/prefix`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::S3(l) => l.fmt(f),
            Self::Gcs(l) => l.fmt(f),
            Self::Azure(l) => l.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_pick_the_store() {
        let named = |path: &str| Location::of(path).map(|l| l.unwrap().bucket());
        assert_eq!(named("s3://b/p").as_deref(), Some("S3 bucket 'b'"));
        assert_eq!(named("gs://b/p").as_deref(), Some("GCS bucket 'b'"));
        assert_eq!(named("as://a/c/p").as_deref(), Some("Azure container 'c'"));
        assert_eq!(named("/models"), None);
        assert_eq!(named("models/gs://x"), None);
        assert!(Location::of("gs://").unwrap().is_err());
    }

    #[test]
    fn displays_and_prefixes() {
        let location = Location::of("as://a/c/p/q/").unwrap().unwrap();
        assert_eq!(
            (location.to_string().as_str(), location.prefix()),
            ("as://a/c/p/q", "p/q")
        );
        assert_eq!(location.service(), "Azure");
    }
}
