//! The certificates a TLS connection to Redis uses, read from the files the
//! settings name.

use std::{fs, path::Path};

use redis::{ClientTlsConfig, TlsCertificates};

use crate::settings::RedisSettings;

/// The client certificate (mutual TLS) and the authorities to trust; the
/// error names the file that could not be read.
pub(crate) fn certificates(settings: &RedisSettings) -> Result<TlsCertificates, String> {
    let client_tls = match (&settings.cert, &settings.key) {
        (Some(cert), Some(key)) => Some(ClientTlsConfig {
            client_cert: read("cert", cert)?,
            client_key: read("key", key)?,
        }),
        _ => None,
    };
    let mut authorities = Vec::new();
    if let Some(file) = &settings.cacert {
        authorities.extend(read("cacert", file)?);
    }
    if let Some(dir) = &settings.cacert_dir {
        authorities.extend(folder(dir)?);
    }
    Ok(TlsCertificates {
        client_tls,
        root_cert: (!authorities.is_empty()).then_some(authorities),
    })
}

fn read(setting: &str, path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("{setting} '{}': {e}", path.display()))
}

/// Every PEM file (`.pem`, `.crt`) in `dir`, one after the other.
fn folder(dir: &Path) -> Result<Vec<u8>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cacert_dir '{}': {e}", dir.display()))?;
    let mut files: Vec<_> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "pem" || ext == "crt")
        })
        .collect();
    files.sort();
    let mut pem = Vec::new();
    for file in files {
        pem.extend(read("cacert_dir", &file)?);
        pem.push(b'\n');
    }
    if pem.is_empty() {
        return Err(format!(
            "cacert_dir '{}' holds no .pem or .crt file",
            dir.display()
        ));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.pem"), "A").unwrap();
        fs::write(dir.path().join("b.crt"), "B").unwrap();
        fs::write(dir.path().join("notes.txt"), "not a certificate").unwrap();
        let settings = RedisSettings {
            cacert_dir: Some(dir.path().into()),
            ..RedisSettings::default()
        };
        let certificates = certificates(&settings).unwrap();
        assert_eq!(certificates.root_cert.as_deref(), Some(&b"A\nB\n"[..]));
        assert!(certificates.client_tls.is_none());
    }

    #[test]
    fn missing_files_are_named() {
        let settings = RedisSettings {
            cert: Some("/nowhere/client.pem".into()),
            key: Some("/nowhere/client.key".into()),
            ..RedisSettings::default()
        };
        let message = certificates(&settings).unwrap_err();
        assert!(
            message.starts_with("cert '/nowhere/client.pem'"),
            "{message}"
        );
        let empty = tempfile::tempdir().unwrap();
        let settings = RedisSettings {
            cacert_dir: Some(empty.path().into()),
            ..RedisSettings::default()
        };
        assert!(
            certificates(&settings)
                .unwrap_err()
                .contains("holds no .pem")
        );
    }
}
