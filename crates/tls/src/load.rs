//! Reading the files of a [`TlsFiles`] into a rustls server configuration;
//! every error names the file it is about.

use std::{path::Path, sync::Arc};

use rustls::{
    RootCertStore, ServerConfig,
    crypto::{CryptoProvider, ring},
    pki_types::{
        CertificateDer, PrivateKeyDer,
        pem::{self, PemObject},
    },
    server::{WebPkiClientVerifier, danger::ClientCertVerifier},
};

use crate::files::TlsFiles;

const CERT: &str = "certificate file";
const KEY: &str = "private key file";
const ROOT: &str = "root certificate file";

/// What the files of a [`TlsFiles`] held when read: equal contents make
/// equal configurations, so comparing two tells whether to load again.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Contents {
    cert: Result<Vec<u8>, String>,
    key: Result<Vec<u8>, String>,
    /// Read only for mutual TLS.
    root: Option<Result<Vec<u8>, String>>,
}

impl Contents {
    /// Reads the files; one that cannot be read keeps its error.
    pub(crate) fn read(files: &TlsFiles) -> Self {
        let root = files.root.as_deref().filter(|_| files.mutual);
        Self {
            cert: read(&files.cert, CERT),
            key: read(&files.key, KEY),
            root: root.map(|root| read(root, ROOT)),
        }
    }
}

/// The server configuration for `files` from their `contents`, offering
/// the ALPN protocols `alpn`.
pub(crate) fn server_config(
    files: &TlsFiles,
    contents: &Contents,
    alpn: &[Vec<u8>],
) -> Result<ServerConfig, String> {
    let provider = Arc::new(ring::default_provider());
    let chain = certificates(&files.cert, CERT, contents.cert.as_deref()?)?;
    let key = private_key(&files.key, contents.key.as_deref()?)?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?;
    let builder = if files.mutual {
        let (Some(root), Some(pem)) = (&files.root, &contents.root) else {
            return Err("mutual TLS needs a root certificate file \
                 (of the authority that signs client certificates)"
                .to_string());
        };
        builder.with_client_cert_verifier(client_verifier(root, pem.as_deref()?, provider)?)
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| unusable_pair(files, e))?;
    config.alpn_protocols = alpn.to_vec();
    Ok(config)
}

/// Why the certificate and key cannot serve together.
fn unusable_pair(files: &TlsFiles, error: rustls::Error) -> String {
    let (cert, key) = (files.cert.display(), files.key.display());
    match error {
        rustls::Error::InconsistentKeys(_) => {
            format!("private key file {key}: the key does not match the certificate in {cert}")
        }
        rustls::Error::InvalidCertificate(e) => {
            format!("certificate file {cert}: the certificate is not valid: {e}")
        }
        e => format!("private key file {key}: the key cannot be used: {e}"),
    }
}

/// Verifies client certificates against the authorities in `root`.
fn client_verifier(
    root: &Path,
    pem: &[u8],
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(root, ROOT, pem)? {
        roots
            .add(cert)
            .map_err(|e| format!("{ROOT} {}: {e}", root.display()))?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| format!("{ROOT} {}: {e}", root.display()))
}

/// The certificates in `pem`, the contents of `path`: at least one.
fn certificates(
    path: &Path,
    what: &str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| not_pem(path, what, &e))?;
    if certs.is_empty() {
        return Err(format!(
            "{what} {}: no certificate in it (no PEM \"BEGIN CERTIFICATE\" block)",
            path.display()
        ));
    }
    Ok(certs)
}

/// The first private key in `pem`, the contents of `path`.
fn private_key(path: &Path, pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        pem::Error::NoItemsFound => format!(
            "{KEY} {}: no private key in it (no PEM \"BEGIN PRIVATE KEY\" block or its RSA/EC forms)",
            path.display()
        ),
        e => not_pem(path, KEY, &e),
    })
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{what} {}: cannot read it: {e}", path.display()))
}

fn not_pem(path: &Path, what: &str, error: &pem::Error) -> String {
    format!("{what} {}: not a valid PEM file: {error}", path.display())
}

#[cfg(test)]
mod tests {
    use rustls::ServerConfig;

    use super::{Contents, server_config};
    use crate::{
        TlsFiles,
        tests::certs::{Authority, Files},
    };

    fn load(files: &TlsFiles) -> Result<ServerConfig, String> {
        server_config(files, &Contents::read(files), &[b"h2".to_vec()])
    }

    fn error(files: &TlsFiles) -> String {
        load(files).expect_err("loading should fail")
    }

    #[test]
    fn good_files_load() {
        let dir = Files::new();
        let ca = Authority::new("good");
        let files = dir.server(&ca, true);
        let config = load(&files).unwrap();
        assert_eq!(config.alpn_protocols, [b"h2".to_vec()]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("missing"), false);
        files.cert = dir.path("nowhere.pem");
        let message = error(&files);
        assert!(
            message.starts_with(&format!(
                "certificate file {}: cannot read it",
                files.cert.display()
            )),
            "{message}"
        );
        let mut files = dir.server(&Authority::new("missing"), false);
        files.key = dir.path("nokey.pem");
        assert!(error(&files).contains(&files.key.display().to_string()));
    }

    #[test]
    fn a_file_without_a_certificate_is_named() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("empty"), false);
        files.cert = dir.write("empty.pem", "just text\n");
        let message = error(&files);
        assert_eq!(
            message,
            format!(
                "certificate file {}: no certificate in it (no PEM \"BEGIN CERTIFICATE\" block)",
                files.cert.display()
            )
        );
    }

    #[test]
    fn a_file_without_a_key_is_named() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("keyless"), false);
        // The certificate file holds no key.
        files.key = files.cert.clone();
        let message = error(&files);
        assert!(
            message.starts_with(&format!(
                "private key file {}: no private key in it",
                files.key.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_broken_pem_block_is_named() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("broken"), false);
        files.cert = dir.write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n");
        let message = error(&files);
        assert!(
            message.starts_with(&format!(
                "certificate file {}: not a valid PEM file",
                files.cert.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn a_key_of_another_certificate_is_refused() {
        let dir = Files::new();
        let ca = Authority::new("pair");
        let mut files = dir.server(&ca, false);
        files.key = dir.write("other.key", &ca.server().key_pem);
        let message = error(&files);
        assert_eq!(
            message,
            format!(
                "private key file {}: the key does not match the certificate in {}",
                files.key.display(),
                files.cert.display()
            )
        );
    }

    #[test]
    fn mutual_needs_a_root_file() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("mutual"), true);
        files.root = None;
        assert!(error(&files).starts_with("mutual TLS needs a root certificate file"));
        files.root = Some(files.key.clone());
        let message = error(&files);
        assert!(
            message.starts_with(&format!(
                "root certificate file {}: no certificate in it",
                files.key.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn without_mutual_the_root_file_is_not_read() {
        let dir = Files::new();
        let mut files = dir.server(&Authority::new("plain"), false);
        files.root = Some(dir.path("nowhere.pem"));
        assert!(load(&files).is_ok());
    }
}
