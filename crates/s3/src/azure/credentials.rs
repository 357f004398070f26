//! Azure Storage account, endpoint and credentials from where the Azure CLI
//! and SDKs look. `AZURE_STORAGE_CONNECTION_STRING` may name the blob
//! endpoint (how they reach an emulator such as Azurite) and credentials;
//! else, first match wins:
//! 1. `AZURE_STORAGE_KEY`, the account's shared key (Triton's variable);
//! 2. `AZURE_STORAGE_SAS_TOKEN`;
//! 3. a service principal or workload identity (`AZURE_CLIENT_ID` and
//!    `AZURE_TENANT_ID` with `AZURE_CLIENT_SECRET` or
//!    `AZURE_FEDERATED_TOKEN_FILE`), whose tokens the client fetches;
//! 4. none: anonymous requests, which read a public container (as Triton).
//!
//! The account is `AZURE_STORAGE_ACCOUNT` when set (as Triton), else the
//! one the path names. Never the instance metadata service.

use super::{connection_string::ConnectionString, location::AzureLocation};
use crate::env::Env;

/// How requests are authorized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// Signed with the account's shared key.
    Key(String),
    /// With a SAS token's query.
    Sas(String),
    /// With tokens the client fetches for an application.
    Fetched(ServicePrincipal),
    /// Not at all.
    Anonymous,
}

/// An Entra ID application the client fetches tokens for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePrincipal {
    pub client_id: String,
    pub tenant_id: String,
    pub secret: Option<String>,
    pub federated_token_file: Option<String>,
    pub authority_host: Option<String>,
}

/// The account, its endpoint, the credentials and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureSettings {
    pub account: String,
    /// The blob service's URL.
    pub endpoint: String,
    pub auth: Auth,
    /// Where the credentials came from, for error messages.
    pub source: String,
}

const CONNECTION_STRING: &str = "AZURE_STORAGE_CONNECTION_STRING";

/// Finds the account, endpoint and credentials for `location`.
pub fn resolve(location: &AzureLocation, env: &Env) -> Result<AzureSettings, String> {
    let account = env
        .get("AZURE_STORAGE_ACCOUNT")
        .unwrap_or(&location.account)
        .to_string();
    let connection = match env.get(CONNECTION_STRING) {
        Some(text) => {
            ConnectionString::parse(text).map_err(|e| format!("{CONNECTION_STRING}: {e}"))?
        }
        None => ConnectionString::default(),
    };
    if let Some(other) = connection.account.as_ref().filter(|a| **a != account) {
        return Err(format!(
            "{CONNECTION_STRING} is for account '{other}', the repository is in account '{account}'"
        ));
    }
    let (auth, source) = match (connection.key, connection.sas) {
        (Some(key), _) => (Auth::Key(key), CONNECTION_STRING),
        (None, Some(sas)) => (Auth::Sas(sas), CONNECTION_STRING),
        (None, None) => from_variables(env)?,
    };
    Ok(AzureSettings {
        endpoint: connection
            .blob_endpoint
            .unwrap_or_else(|| format!("https://{account}.blob.core.windows.net")),
        account,
        auth,
        source: source.into(),
    })
}

/// The credentials the variables other than the connection string give,
/// and the variable they came from.
fn from_variables(env: &Env) -> Result<(Auth, &'static str), String> {
    if let Some(key) = env.get("AZURE_STORAGE_KEY") {
        return Ok((Auth::Key(key.into()), "AZURE_STORAGE_KEY"));
    }
    if let Some(sas) = env.get("AZURE_STORAGE_SAS_TOKEN") {
        return Ok((Auth::Sas(sas.into()), "AZURE_STORAGE_SAS_TOKEN"));
    }
    let (Some(client_id), Some(tenant_id)) =
        (env.get("AZURE_CLIENT_ID"), env.get("AZURE_TENANT_ID"))
    else {
        return Ok((
            Auth::Anonymous,
            "nowhere (anonymous: no AZURE_STORAGE_CONNECTION_STRING credentials, \
             AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN, or AZURE_CLIENT_ID with AZURE_TENANT_ID)",
        ));
    };
    let principal = ServicePrincipal {
        client_id: client_id.into(),
        tenant_id: tenant_id.into(),
        secret: env.get("AZURE_CLIENT_SECRET").map(str::to_string),
        federated_token_file: env.get("AZURE_FEDERATED_TOKEN_FILE").map(str::to_string),
        authority_host: env.get("AZURE_AUTHORITY_HOST").map(str::to_string),
    };
    let source = match (&principal.secret, &principal.federated_token_file) {
        (Some(_), _) => "AZURE_CLIENT_SECRET",
        (None, Some(_)) => "AZURE_FEDERATED_TOKEN_FILE",
        (None, None) => {
            return Err("AZURE_CLIENT_ID and AZURE_TENANT_ID are set, but neither \
                        AZURE_CLIENT_SECRET nor AZURE_FEDERATED_TOKEN_FILE"
                .into());
        }
    };
    Ok((Auth::Fetched(principal), source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location() -> AzureLocation {
        AzureLocation::parse("as://acct/models/repo").unwrap()
    }

    #[test]
    fn the_key_of_the_account_the_path_names() {
        let env = Env::of(&[("AZURE_STORAGE_KEY", "a2V5")]);
        let settings = resolve(&location(), &env).unwrap();
        assert_eq!(settings.account, "acct");
        assert_eq!(settings.endpoint, "https://acct.blob.core.windows.net");
        assert_eq!(settings.auth, Auth::Key("a2V5".into()));
        assert_eq!(settings.source, "AZURE_STORAGE_KEY");
    }

    #[test]
    fn azure_storage_account_names_the_account() {
        let env = Env::of(&[("AZURE_STORAGE_ACCOUNT", "other")]);
        let settings = resolve(&location(), &env).unwrap();
        assert_eq!(settings.account, "other");
        assert_eq!(settings.endpoint, "https://other.blob.core.windows.net");
        assert_eq!(settings.auth, Auth::Anonymous);
        assert!(
            settings.source.starts_with("nowhere (anonymous"),
            "{}",
            settings.source
        );
    }

    #[test]
    fn a_connection_string_comes_first_and_must_match_the_account() {
        let env = Env::of(&[
            (
                CONNECTION_STRING,
                "AccountName=acct;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/acct",
            ),
            ("AZURE_STORAGE_KEY", "ignored"),
        ]);
        let settings = resolve(&location(), &env).unwrap();
        assert_eq!(settings.endpoint, "http://127.0.0.1:1/acct");
        assert_eq!(settings.auth, Auth::Key("a2V5".into()));
        assert_eq!(settings.source, CONNECTION_STRING);
        let elsewhere = Env::of(&[(CONNECTION_STRING, "AccountName=b;AccountKey=k")]);
        let error = resolve(&location(), &elsewhere).unwrap_err();
        assert!(error.contains("for account 'b'"), "{error}");
    }

    #[test]
    fn an_endpoint_only_connection_string_takes_the_key_variable() {
        let env = Env::of(&[
            (CONNECTION_STRING, "BlobEndpoint=http://127.0.0.1:1/acct"),
            ("AZURE_STORAGE_KEY", "a2V5"),
        ]);
        let settings = resolve(&location(), &env).unwrap();
        assert_eq!(settings.endpoint, "http://127.0.0.1:1/acct");
        assert_eq!(settings.auth, Auth::Key("a2V5".into()));
        assert_eq!(settings.source, "AZURE_STORAGE_KEY");
    }

    #[test]
    fn sas_token_and_service_principal() {
        let sas = Env::of(&[("AZURE_STORAGE_SAS_TOKEN", "sv=1&sig=x")]);
        assert_eq!(
            resolve(&location(), &sas).unwrap().auth,
            Auth::Sas("sv=1&sig=x".into())
        );
        let principal = Env::of(&[
            ("AZURE_CLIENT_ID", "c"),
            ("AZURE_TENANT_ID", "t"),
            ("AZURE_FEDERATED_TOKEN_FILE", "/token"),
        ]);
        let settings = resolve(&location(), &principal).unwrap();
        assert_eq!(settings.source, "AZURE_FEDERATED_TOKEN_FILE");
        assert!(
            matches!(settings.auth, Auth::Fetched(p) if p.federated_token_file.as_deref() == Some("/token"))
        );
        let half = Env::of(&[("AZURE_CLIENT_ID", "c"), ("AZURE_TENANT_ID", "t")]);
        assert!(
            resolve(&location(), &half)
                .unwrap_err()
                .contains("neither AZURE_CLIENT_SECRET")
        );
    }
}
