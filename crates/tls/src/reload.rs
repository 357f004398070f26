//! Keeping the server configuration in step with its files: the state
//! behind a [`TlsAcceptor`](crate::TlsAcceptor), checked as connections
//! arrive.

use std::{sync::Arc, time::Duration};

use rustls::ServerConfig;
use tokio::time::Instant;

use crate::{
    files::TlsFiles,
    load::{Contents, server_config},
};

/// How often, at most, the files are read again to see whether they changed.
pub(crate) const RECHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The files, what they held when last read, and the configuration made
/// from the last contents that loaded.
#[derive(Debug)]
pub(crate) struct Reloader {
    files: TlsFiles,
    alpn: Vec<Vec<u8>>,
    contents: Contents,
    config: Arc<ServerConfig>,
    checked_at: Instant,
}

impl Reloader {
    /// Loads `files` at `now`; fails with a message naming the file at fault.
    pub(crate) fn new(files: TlsFiles, alpn: Vec<Vec<u8>>, now: Instant) -> Result<Self, String> {
        let contents = Contents::read(&files);
        let config = Arc::new(server_config(&files, &contents, &alpn)?);
        Ok(Self {
            files,
            alpn,
            contents,
            config,
            checked_at: now,
        })
    }

    /// The configuration for a connection arriving at `now`. At most once
    /// per [`RECHECK_INTERVAL`] the files are read (a few small blocking
    /// reads); if they changed and load, their configuration replaces the
    /// old one, and if they do not load the old one stays, with a warning.
    pub(crate) fn config(&mut self, now: Instant) -> Arc<ServerConfig> {
        if now.saturating_duration_since(self.checked_at) >= RECHECK_INTERVAL {
            self.checked_at = now;
            let contents = Contents::read(&self.files);
            if contents != self.contents {
                self.reload(&contents);
                self.contents = contents;
            }
        }
        self.config.clone()
    }

    fn reload(&mut self, contents: &Contents) {
        match server_config(&self.files, contents, &self.alpn) {
            Ok(config) => {
                log::info!(
                    "TLS certificate files changed: new connections use the certificate in {}",
                    self.files.cert.display()
                );
                self.config = Arc::new(config);
            }
            Err(e) => log::warn!(
                "TLS certificate files changed but do not load: {e}; \
                 new connections keep the certificate loaded before"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::time::Instant;

    use super::{RECHECK_INTERVAL, Reloader};
    use crate::tests::certs::{Authority, Files};

    fn reloader(dir: &Files, ca: &Authority, now: Instant) -> Reloader {
        Reloader::new(dir.server(ca, true), Vec::new(), now).unwrap()
    }

    #[test]
    fn unchanged_files_keep_the_configuration() {
        let dir = Files::new();
        let start = Instant::now();
        let mut state = reloader(&dir, &Authority::new("same"), start);
        let first = state.config(start);
        assert!(Arc::ptr_eq(
            &first,
            &state.config(start + RECHECK_INTERVAL * 3)
        ));
    }

    #[test]
    fn changed_files_load_after_the_interval() {
        let dir = Files::new();
        let start = Instant::now();
        let mut state = reloader(&dir, &Authority::new("old"), start);
        let old = state.config(start);
        dir.server(&Authority::new("new"), true);
        let soon = start + RECHECK_INTERVAL / 2;
        assert!(Arc::ptr_eq(&old, &state.config(soon)), "checked too soon");
        let new = state.config(start + RECHECK_INTERVAL);
        assert!(!Arc::ptr_eq(&old, &new));
        assert!(Arc::ptr_eq(
            &new,
            &state.config(start + RECHECK_INTERVAL * 2)
        ));
    }

    #[test]
    fn a_bad_change_keeps_the_old_configuration_until_fixed() {
        let dir = Files::new();
        let start = Instant::now();
        let ca = Authority::new("kept");
        let mut state = reloader(&dir, &ca, start);
        let old = state.config(start);
        // Half way through a rotation: a new certificate, the old key.
        dir.write("server.pem", &ca.server().cert_pem);
        assert!(Arc::ptr_eq(&old, &state.config(start + RECHECK_INTERVAL)));
        dir.write("server.key", "");
        assert!(Arc::ptr_eq(
            &old,
            &state.config(start + RECHECK_INTERVAL * 2)
        ));
        std::fs::remove_file(dir.path("ca.pem")).unwrap();
        assert!(Arc::ptr_eq(
            &old,
            &state.config(start + RECHECK_INTERVAL * 3)
        ));
        dir.server(&ca, true);
        assert!(!Arc::ptr_eq(
            &old,
            &state.config(start + RECHECK_INTERVAL * 4)
        ));
    }
}
