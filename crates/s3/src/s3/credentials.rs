//! Credentials and region from where AWS's own tools look: the environment
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_DEFAULT_REGION`, `AWS_PROFILE`), then the profile in
//! `~/.aws/credentials` and `~/.aws/config` (`AWS_SHARED_CREDENTIALS_FILE`,
//! `AWS_CONFIG_FILE`), then a web identity or container credentials, which
//! the object store client fetches. Never the EC2 instance metadata service:
//! with nothing found, the error lists every place looked at.

use std::{collections::HashMap, path::PathBuf};

use super::profile_file;
use crate::env::Env;

/// How requests are signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signing {
    /// With these keys.
    Keys {
        id: String,
        secret: String,
        token: Option<String>,
    },
    /// With credentials the client fetches itself (web identity, container).
    Fetched,
    /// Not at all (`AWS_SKIP_SIGNATURE=true`: a public bucket).
    Anonymous,
}

/// Credentials and region, and where the credentials came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsSettings {
    pub signing: Signing,
    pub region: Option<String>,
    /// Where the credentials came from, for error messages.
    pub source: String,
}

/// The environment variables that hold keys.
const KEY_VARS: &str = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
/// The environment variables of credentials the client fetches.
const FETCHED_VARS: [&str; 3] = [
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
];

/// Finds the credentials and region; the error names every place looked at.
pub fn resolve(env: &Env) -> Result<AwsSettings, String> {
    let explicit_profile = env.get("AWS_PROFILE");
    let profile = explicit_profile.unwrap_or("default");
    let files = [
        ProfileFile::read(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials", profile)?,
        ProfileFile::read(env, "AWS_CONFIG_FILE", "config", profile)?,
    ];
    let region = env
        .get("AWS_REGION")
        .or_else(|| env.get("AWS_DEFAULT_REGION"))
        .or_else(|| files.iter().find_map(|f| f.value("region")))
        .map(str::to_string);
    let settings = |signing, source: String| AwsSettings {
        signing,
        region: region.clone(),
        source,
    };
    match (
        env.get("AWS_ACCESS_KEY_ID"),
        env.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(id), Some(secret)) => {
            let signing = Signing::Keys {
                id: id.into(),
                secret: secret.into(),
                token: env.get("AWS_SESSION_TOKEN").map(str::to_string),
            };
            return Ok(settings(signing, "AWS_ACCESS_KEY_ID".into()));
        }
        (Some(_), None) => {
            return Err("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into());
        }
        (None, Some(_)) => {
            return Err("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".into());
        }
        (None, None) => {}
    }
    for file in &files {
        if let Some(signing) = file.keys()? {
            return Ok(settings(signing, file.describe()));
        }
    }
    if let Some(var) = FETCHED_VARS.into_iter().find(|v| env.get(v).is_some()) {
        return Ok(settings(Signing::Fetched, var.into()));
    }
    if env
        .get("AWS_SKIP_SIGNATURE")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return Ok(settings(Signing::Anonymous, "AWS_SKIP_SIGNATURE".into()));
    }
    let looked_at: Vec<String> = files.iter().map(ProfileFile::status).collect();
    let profile_note = match explicit_profile {
        Some(_) => " (AWS_PROFILE)",
        None => "",
    };
    Err(format!(
        "no AWS credentials: looked at {KEY_VARS}, {}, and profile '{profile}'{profile_note} in {}; \
         AWS_SKIP_SIGNATURE=true reads a public bucket without them",
        FETCHED_VARS.join(", "),
        looked_at.join(" and ")
    ))
}

/// One of the shared files and the profile's section in it.
struct ProfileFile {
    path: PathBuf,
    /// The file's text, `None` if there is no such file.
    text: Option<String>,
    section_name: String,
    section: Option<HashMap<String, String>>,
}

impl ProfileFile {
    /// Reads the file `var` names, or `~/.aws/NAME`.
    fn read(env: &Env, var: &str, name: &str, profile: &str) -> Result<Self, String> {
        let path = match env.get(var) {
            Some(path) => PathBuf::from(path),
            None => env.home().join(".aws").join(name),
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        // The config file prefixes profiles other than the default one.
        let section_name = match (name, profile) {
            ("config", p) if p != "default" => format!("profile {p}"),
            (_, p) => p.to_string(),
        };
        let section = text
            .as_deref()
            .and_then(|t| profile_file::section(t, &section_name));
        Ok(Self {
            path,
            text,
            section_name,
            section,
        })
    }

    fn value(&self, key: &str) -> Option<&str> {
        self.section
            .as_ref()?
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The profile's keys, if this file has them.
    fn keys(&self) -> Result<Option<Signing>, String> {
        match (
            self.value("aws_access_key_id"),
            self.value("aws_secret_access_key"),
        ) {
            (Some(id), Some(secret)) => Ok(Some(Signing::Keys {
                id: id.into(),
                secret: secret.into(),
                token: self.value("aws_session_token").map(str::to_string),
            })),
            (None, None) => Ok(None),
            _ => Err(format!(
                "{} has only one of aws_access_key_id and aws_secret_access_key",
                self.describe()
            )),
        }
    }

    fn describe(&self) -> String {
        format!("[{}] in {}", self.section_name, self.path.display())
    }

    /// What this file held, for the error that found no credentials.
    fn status(&self) -> String {
        let why = match (&self.text, &self.section) {
            (None, _) => "no such file".to_string(),
            (Some(_), None) => format!("no [{}] section", self.section_name),
            (Some(_), Some(_)) => format!("no keys in [{}]", self.section_name),
        };
        format!("{} ({why})", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::of(pairs)
    }

    /// An environment whose home holds the given shared files.
    fn home_with(credentials: Option<&str>, config: Option<&str>) -> (tempfile::TempDir, Env) {
        let home = tempfile::tempdir().unwrap();
        let aws = home.path().join(".aws");
        std::fs::create_dir(&aws).unwrap();
        for (name, text) in [("credentials", credentials), ("config", config)] {
            if let Some(text) = text {
                std::fs::write(aws.join(name), text).unwrap();
            }
        }
        let env = env(&[("HOME", home.path().to_str().unwrap())]);
        (home, env)
    }

    fn keys(id: &str, secret: &str, token: Option<&str>) -> Signing {
        Signing::Keys {
            id: id.into(),
            secret: secret.into(),
            token: token.map(str::to_string),
        }
    }

    #[test]
    fn environment_keys_come_first() {
        let settings = resolve(&env(&[
            ("HOME", "/nonexistent"),
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("AWS_SESSION_TOKEN", "token"),
            ("AWS_DEFAULT_REGION", "eu-central-1"),
        ]))
        .unwrap();
        assert_eq!(settings.signing, keys("AKID", "secret", Some("token")));
        assert_eq!(settings.region.as_deref(), Some("eu-central-1"));
        assert_eq!(settings.source, "AWS_ACCESS_KEY_ID");
    }

    #[test]
    fn half_a_key_pair_is_an_error() {
        let error = resolve(&env(&[("AWS_ACCESS_KEY_ID", "AKID")])).unwrap_err();
        assert!(error.contains("AWS_SECRET_ACCESS_KEY is not"), "{error}");
    }

    #[test]
    fn the_default_profile_of_the_credentials_file() {
        let (_home, env) = home_with(
            Some("[default]\naws_access_key_id = A\naws_secret_access_key = S\n"),
            Some("[default]\nregion = us-west-2\n"),
        );
        let settings = resolve(&env).unwrap();
        assert_eq!(settings.signing, keys("A", "S", None));
        assert_eq!(settings.region.as_deref(), Some("us-west-2"));
        assert!(
            settings.source.starts_with("[default] in "),
            "{}",
            settings.source
        );
    }

    #[test]
    fn a_named_profile_from_the_config_file() {
        let (_home, mut env) = home_with(
            None,
            Some("[profile ci]\naws_access_key_id = A\naws_secret_access_key = S\n"),
        );
        env.set("AWS_PROFILE", "ci");
        assert_eq!(resolve(&env).unwrap().signing, keys("A", "S", None));
    }

    #[test]
    fn files_named_by_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("creds");
        std::fs::write(
            &file,
            "[default]\naws_access_key_id=A\naws_secret_access_key=S\n",
        )
        .unwrap();
        let env = env(&[
            ("HOME", "/nonexistent"),
            ("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap()),
        ]);
        assert_eq!(resolve(&env).unwrap().signing, keys("A", "S", None));
    }

    #[test]
    fn fetched_and_anonymous() {
        let web = env(&[
            ("HOME", "/nonexistent"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
        ]);
        assert_eq!(resolve(&web).unwrap().signing, Signing::Fetched);
        let public = env(&[("HOME", "/nonexistent"), ("AWS_SKIP_SIGNATURE", "true")]);
        assert_eq!(resolve(&public).unwrap().signing, Signing::Anonymous);
    }

    #[test]
    fn nothing_found_lists_every_place_looked_at() {
        let (home, env) = home_with(Some("[other]\nx = 1\n"), None);
        let error = resolve(&env).unwrap_err();
        let aws = home.path().join(".aws");
        for expected in [
            KEY_VARS.to_string(),
            "AWS_WEB_IDENTITY_TOKEN_FILE".into(),
            "profile 'default'".into(),
            format!(
                "{} (no [default] section)",
                aws.join("credentials").display()
            ),
            format!("{} (no such file)", aws.join("config").display()),
        ] {
            assert!(error.contains(&expected), "{expected:?} not in {error}");
        }
    }
}
