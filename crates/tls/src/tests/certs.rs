//! Certificates made for the tests (rcgen), and a folder for their files.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tempfile::TempDir;

use crate::files::TlsFiles;

/// A certificate authority.
pub(crate) struct Authority(CertifiedIssuer<'static, KeyPair>);

/// A certificate signed by an [`Authority`], with its key.
pub(crate) struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    pub cert: CertificateDer<'static>,
    pub key: PrivateKeyDer<'static>,
}

impl Authority {
    /// A new authority called `name`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        Self(CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap())
    }

    /// The authority's own certificate.
    pub fn cert(&self) -> CertificateDer<'static> {
        self.0.der().clone()
    }

    /// A new server certificate for `localhost` and `127.0.0.1`.
    pub fn server(&self) -> Issued {
        self.issue("localhost", ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A new client certificate.
    pub fn client(&self) -> Issued {
        self.issue("client", ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, name: &str, usage: ExtendedKeyUsagePurpose) -> Issued {
        let names = vec![name.to_string(), "127.0.0.1".to_string()];
        let mut params = CertificateParams::new(names).unwrap();
        params.extended_key_usages.push(usage);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.0).unwrap();
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        }
    }
}

/// A temporary folder for PEM files.
pub(crate) struct Files(TempDir);

impl Files {
    pub fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    /// The path of `name` in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// Writes `contents` to `name` (in place if it exists).
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Writes a new server certificate of `ca` and its key to `server.pem`
    /// and `server.key`, and `ca`'s certificate to `ca.pem`, in place: the
    /// files of a server that takes client certificates of `ca` if `mutual`.
    pub fn server(&self, ca: &Authority, mutual: bool) -> TlsFiles {
        let server = ca.server();
        TlsFiles {
            cert: self.write("server.pem", &server.cert_pem),
            key: self.write("server.key", &server.key_pem),
            root: Some(self.write("ca.pem", &ca.0.pem())),
            mutual,
        }
    }
}
