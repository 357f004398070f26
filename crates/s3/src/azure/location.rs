//! `as://account/container/path` repository paths, as Triton reads them:
//! the account may be given as its host (`account.blob.core.windows.net`),
//! and a query (`?...`) after the path is ignored.

use std::fmt;

/// Where a model repository lives in Azure Blob Storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureLocation {
    /// The storage account the path names.
    pub account: String,
    pub container: String,
    /// The blob prefix of the repository, without leading or trailing `/`.
    pub prefix: String,
}

/// The scheme that marks a repository as Azure Storage's.
pub const SCHEME: &str = "as://";

/// The host suffix of an account's blob service.
const HOST_SUFFIX: &str = ".blob.core.windows.net";

impl AzureLocation {
    /// Parses `as://account/container` or `as://account/container/path`.
    pub fn parse(path: &str) -> Result<Self, String> {
        let invalid = || format!("{path}: not an Azure Storage path (as://account/container/path)");
        let rest = path.strip_prefix(SCHEME).ok_or_else(invalid)?;
        let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
        let (host, rest) = rest.split_once('/').ok_or_else(invalid)?;
        let (container, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() || container.is_empty() {
            return Err(invalid());
        }
        Ok(Self {
            account: host.strip_suffix(HOST_SUFFIX).unwrap_or(host).to_string(),
            container: container.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        })
    }
}

impl fmt::Display for AzureLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.account, self.container)?;
        match self.prefix.is_empty() {
            true => Ok(()),
            false => write!(f, "/{}", self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(path: &str) -> (String, String, String) {
        let l = AzureLocation::parse(path).unwrap();
        (l.account, l.container, l.prefix)
    }

    #[test]
    fn account_container_and_path() {
        let owned = |a: &str, c: &str, p: &str| (a.into(), c.into(), p.into());
        assert_eq!(
            parts("as://acct/models/a/b/"),
            owned("acct", "models", "a/b")
        );
        assert_eq!(parts("as://acct/models"), owned("acct", "models", ""));
        assert_eq!(
            parts("as://acct.blob.core.windows.net/models/repo?sv=1"),
            owned("acct", "models", "repo")
        );
        let location = AzureLocation::parse("as://acct/models/a/").unwrap();
        assert_eq!(location.to_string(), "as://acct/models/a");
    }

    #[test]
    fn account_and_container_are_needed() {
        for path in ["as://", "as://acct", "as://acct/", "as:///models/a"] {
            let error = AzureLocation::parse(path).unwrap_err();
            assert!(
                error.contains("as://account/container/path"),
                "{path}: {error}"
            );
        }
    }
}
