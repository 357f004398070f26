//! Azure Storage connection strings (`AZURE_STORAGE_CONNECTION_STRING`, as
//! the Azure CLI and SDKs read it): `Name=value;` pairs naming the account,
//! its key or a SAS token, and the blob endpoint; or
//! `UseDevelopmentStorage=true`, the local emulator (Azurite) and its
//! well-known account.

/// What a connection string says about the blob service.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionString {
    pub account: Option<String>,
    pub key: Option<String>,
    pub sas: Option<String>,
    /// The blob service's URL, for a path-style endpoint with the account.
    pub blob_endpoint: Option<String>,
}

/// The emulator's account, its published key and its endpoint.
const EMULATOR_ACCOUNT: &str = "devstoreaccount1";
const EMULATOR_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const EMULATOR_ENDPOINT: &str = "http://127.0.0.1:10000/devstoreaccount1";

impl ConnectionString {
    /// Parses a connection string; names are case-insensitive.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut pairs = Vec::new();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is no Name=value pair"))?;
            pairs.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        if get("usedevelopmentstorage").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(Self {
                account: Some(EMULATOR_ACCOUNT.into()),
                key: Some(EMULATOR_KEY.into()),
                sas: None,
                blob_endpoint: Some(EMULATOR_ENDPOINT.into()),
            });
        }
        let account = get("accountname");
        let blob_endpoint = get("blobendpoint")
            .map(|url| url.trim_end_matches('/').to_string())
            .or_else(|| {
                let protocol = get("defaultendpointsprotocol").unwrap_or_else(|| "https".into());
                let suffix = get("endpointsuffix").unwrap_or_else(|| "core.windows.net".into());
                Some(format!("{protocol}://{}.blob.{suffix}", account.as_ref()?))
            });
        Ok(Self {
            account,
            key: get("accountkey"),
            sas: get("sharedaccesssignature"),
            blob_endpoint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_key_and_endpoint() {
        let parsed = ConnectionString::parse(
            "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5==;\
             BlobEndpoint=http://127.0.0.1:10000/acct/;",
        )
        .unwrap();
        assert_eq!(
            parsed,
            ConnectionString {
                account: Some("acct".into()),
                key: Some("a2V5==".into()),
                sas: None,
                blob_endpoint: Some("http://127.0.0.1:10000/acct".into()),
            }
        );
    }

    #[test]
    fn the_endpoint_from_protocol_and_suffix() {
        let parsed =
            ConnectionString::parse("accountname=acct;SharedAccessSignature=sv=1&sig=x").unwrap();
        assert_eq!(parsed.sas.as_deref(), Some("sv=1&sig=x"));
        assert_eq!(
            parsed.blob_endpoint.as_deref(),
            Some("https://acct.blob.core.windows.net")
        );
        let china =
            ConnectionString::parse("AccountName=a;EndpointSuffix=core.chinacloudapi.cn").unwrap();
        assert_eq!(
            china.blob_endpoint.as_deref(),
            Some("https://a.blob.core.chinacloudapi.cn")
        );
    }

    #[test]
    fn development_storage_is_the_emulator() {
        let parsed = ConnectionString::parse("UseDevelopmentStorage=true").unwrap();
        assert_eq!(parsed.account.as_deref(), Some(EMULATOR_ACCOUNT));
        assert_eq!(parsed.blob_endpoint.as_deref(), Some(EMULATOR_ENDPOINT));
        assert!(parsed.key.is_some());
    }

    #[test]
    fn a_part_without_a_value_is_an_error() {
        let error = ConnectionString::parse("AccountName=a;garbage").unwrap_err();
        assert!(error.contains("'garbage'"), "{error}");
    }
}
