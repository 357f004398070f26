//! GCS credentials from where Google's tools look (Application Default
//! Credentials), first match wins:
//! 1. the JSON file `GOOGLE_APPLICATION_CREDENTIALS` names: an authorized
//!    user's or a service account's key, as Triton reads it;
//! 2. gcloud's `application_default_credentials.json` (in `CLOUDSDK_CONFIG`,
//!    else `~/.config/gcloud`), as `gcloud auth application-default login`
//!    writes it;
//! 3. the metadata server, on Google Cloud's machines only (the machine says
//!    it is Google's, or `GCE_METADATA_HOST` names the server);
//! 4. none: anonymous requests, which read a public bucket (Triton's last
//!    resort too).
//!
//! An emulator (`STORAGE_EMULATOR_HOST`, Google's client libraries'
//! variable, or `CLOUD_STORAGE_EMULATOR_ENDPOINT`, the C++ library's) takes
//! the requests instead of Google, without credentials unless
//! `GOOGLE_APPLICATION_CREDENTIALS` names some.

use std::path::{Path, PathBuf};

use crate::env::Env;

/// How requests are authorized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// With tokens from this credentials file.
    File(PathBuf),
    /// With tokens from the machine's metadata server.
    Metadata,
    /// Not at all.
    Anonymous,
}

/// Credentials, where they came from, and the emulator, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsSettings {
    pub auth: Auth,
    /// Where the credentials came from, for error messages.
    pub source: String,
    /// The emulator's URL, when one takes the requests.
    pub emulator: Option<String>,
}

/// The variable naming a credentials file.
const CREDENTIALS_VAR: &str = "GOOGLE_APPLICATION_CREDENTIALS";
/// The emulator variables, in the order they are read.
const EMULATOR_VARS: [&str; 2] = ["STORAGE_EMULATOR_HOST", "CLOUD_STORAGE_EMULATOR_ENDPOINT"];
/// The credential types a file may hold, and the fields each needs.
const FILE_TYPES: [(&str, &[&str]); 2] = [
    ("service_account", &["client_email", "private_key"]),
    (
        "authorized_user",
        &["client_id", "client_secret", "refresh_token"],
    ),
];

/// Finds the credentials; `on_google_cloud` says whether a metadata server
/// serves this machine.
pub fn resolve(env: &Env, on_google_cloud: bool) -> Result<GcsSettings, String> {
    let emulator = EMULATOR_VARS
        .iter()
        .find_map(|var| Some((*var, env.get(var)?)));
    let settings = |auth, source: String| GcsSettings {
        auth,
        source,
        emulator: emulator.map(|(_, url)| with_scheme(url)),
    };
    if let Some(path) = env.get(CREDENTIALS_VAR) {
        let path = PathBuf::from(path);
        check_file(&path).map_err(|e| format!("{CREDENTIALS_VAR} names {e}"))?;
        return Ok(settings(Auth::File(path), CREDENTIALS_VAR.into()));
    }
    if let Some((var, _)) = emulator {
        return Ok(settings(
            Auth::Anonymous,
            format!("nowhere ({var}: an emulator)"),
        ));
    }
    let gcloud = gcloud_file(env);
    if gcloud.is_file() {
        check_file(&gcloud)?;
        let source = gcloud.display().to_string();
        return Ok(settings(Auth::File(gcloud), source));
    }
    if on_google_cloud {
        return Ok(settings(Auth::Metadata, "the metadata server".into()));
    }
    Ok(settings(
        Auth::Anonymous,
        format!(
            "nowhere (anonymous: no {CREDENTIALS_VAR}, no {}, not on Google Cloud)",
            gcloud.display()
        ),
    ))
}

/// Whether this machine is one of Google Cloud's (as Google's client
/// libraries tell, without a request): `GCE_METADATA_HOST` is set, or the
/// firmware names Google as the product.
pub fn on_google_cloud(env: &Env) -> bool {
    env.get("GCE_METADATA_HOST").is_some()
        || std::fs::read_to_string("/sys/class/dmi/id/product_name")
            .is_ok_and(|name| name.trim_start().starts_with("Google"))
}

/// gcloud's application default credentials file.
fn gcloud_file(env: &Env) -> PathBuf {
    let config = match env.get("CLOUDSDK_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => env.home().join(".config/gcloud"),
    };
    config.join("application_default_credentials.json")
}

/// Checks that `path` holds credentials of a type the client takes; the
/// error starts with the path.
fn check_file(path: &Path) -> Result<(), String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown}: not JSON ({e})"))?;
    let kind = json
        .get("type")
        .and_then(|t| t.as_str())
        .ok_or_else(|| format!("{shown}: no \"type\" field"))?;
    let Some((_, fields)) = FILE_TYPES.iter().find(|(t, _)| *t == kind) else {
        let known: Vec<&str> = FILE_TYPES.iter().map(|(t, _)| *t).collect();
        return Err(format!(
            "{shown}: credentials of type \"{kind}\" are not supported (only {})",
            known.join(" and ")
        ));
    };
    match fields
        .iter()
        .find(|f| json.get(**f).is_none_or(|v| !v.is_string()))
    {
        Some(missing) => Err(format!("{shown}: a {kind} without \"{missing}\"")),
        None => Ok(()),
    }
}

/// `host:port` as `http://host:port`: Google's libraries take either.
fn with_scheme(url: &str) -> String {
    match url.contains("://") {
        true => url.trim_end_matches('/').to_string(),
        false => format!("http://{}", url.trim_end_matches('/')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVICE_ACCOUNT: &str =
        r#"{"type": "service_account", "client_email": "a@b", "private_key": "k"}"#;

    fn file(dir: &Path, name: &str, text: &str) -> String {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    #[test]
    fn the_named_file_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        let key = file(dir.path(), "key.json", SERVICE_ACCOUNT);
        let env = Env::of(&[(CREDENTIALS_VAR, &key), ("HOME", "/nonexistent")]);
        let settings = resolve(&env, true).unwrap();
        assert_eq!(settings.auth, Auth::File(key.into()));
        assert_eq!(settings.source, CREDENTIALS_VAR);
        assert_eq!(settings.emulator, None);
    }

    #[test]
    fn a_bad_file_says_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("missing.json", None, "No such file"),
            ("text.json", Some("not json"), "not JSON"),
            ("untyped.json", Some("{}"), "no \"type\" field"),
            (
                "external.json",
                Some(r#"{"type": "external_account"}"#),
                "type \"external_account\" are not supported",
            ),
            (
                "partial.json",
                Some(r#"{"type": "service_account", "client_email": "a@b"}"#),
                "a service_account without \"private_key\"",
            ),
        ];
        for (name, text, expected) in cases {
            let path = match text {
                Some(text) => file(dir.path(), name, text),
                None => dir.path().join(name).display().to_string(),
            };
            let env = Env::of(&[(CREDENTIALS_VAR, &path)]);
            let error = resolve(&env, false).unwrap_err();
            assert!(
                error.starts_with(&format!("{CREDENTIALS_VAR} names {path}")),
                "{error}"
            );
            assert!(error.contains(expected), "{expected:?} not in {error}");
        }
    }

    #[test]
    fn gclouds_file_then_the_metadata_server_then_anonymous() {
        let home = tempfile::tempdir().unwrap();
        let home_path = home.path().display().to_string();
        let env = Env::of(&[("HOME", &home_path)]);
        let anonymous = resolve(&env, false).unwrap();
        assert_eq!(anonymous.auth, Auth::Anonymous);
        assert!(
            anonymous.source.contains("not on Google Cloud"),
            "{}",
            anonymous.source
        );
        assert_eq!(resolve(&env, true).unwrap().auth, Auth::Metadata);
        let adc = file(
            home.path(),
            ".config/gcloud/application_default_credentials.json",
            r#"{"type": "authorized_user", "client_id": "i", "client_secret": "s", "refresh_token": "r"}"#,
        );
        assert_eq!(resolve(&env, true).unwrap().auth, Auth::File(adc.into()));
    }

    #[test]
    fn an_emulator_takes_no_credentials_unless_named() {
        let env = Env::of(&[("STORAGE_EMULATOR_HOST", "127.0.0.1:4443")]);
        let settings = resolve(&env, true).unwrap();
        assert_eq!(settings.auth, Auth::Anonymous);
        assert_eq!(settings.emulator.as_deref(), Some("http://127.0.0.1:4443"));
        let dir = tempfile::tempdir().unwrap();
        let key = file(dir.path(), "key.json", SERVICE_ACCOUNT);
        let env = Env::of(&[
            ("CLOUD_STORAGE_EMULATOR_ENDPOINT", "https://emulator:9000/"),
            (CREDENTIALS_VAR, &key),
        ]);
        let settings = resolve(&env, false).unwrap();
        assert_eq!(settings.auth, Auth::File(key.into()));
        assert_eq!(settings.emulator.as_deref(), Some("https://emulator:9000"));
    }
}
