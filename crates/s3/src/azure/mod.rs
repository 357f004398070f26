//! Azure Blob Storage (`as://`): the client for one repository's container,
//! with the credentials the Azure CLI and SDKs would use.

mod connection_string;
mod credentials;
pub mod location;

use std::sync::Arc;

use object_store::azure::{MicrosoftAzureBuilder, split_sas};

use crate::{
    client::{self, Connection},
    env::Env,
};
use credentials::Auth;
use location::AzureLocation;

/// A client for `location`'s container.
pub fn connect(location: &AzureLocation, env: &Env) -> Result<Connection, String> {
    let settings = credentials::resolve(location, env).map_err(|e| format!("{location}: {e}"))?;
    let bad = |e: object_store::Error| format!("{location}: bad Azure settings: {e}");
    let mut builder = MicrosoftAzureBuilder::new()
        .with_account(&settings.account)
        .with_container_name(&location.container)
        .with_endpoint(settings.endpoint.clone())
        .with_retry(client::retry())
        .with_client_options(client::options(&settings.endpoint));
    builder = match settings.auth {
        Auth::Key(key) => builder.with_access_key(key),
        Auth::Sas(sas) => builder.with_sas_authorization(split_sas(&sas).map_err(bad)?),
        Auth::Fetched(principal) => {
            builder = builder
                .with_client_id(principal.client_id)
                .with_tenant_id(principal.tenant_id);
            if let Some(secret) = principal.secret {
                builder = builder.with_client_secret(secret);
            }
            if let Some(file) = principal.federated_token_file {
                builder = builder.with_federated_token_file(file);
            }
            match principal.authority_host {
                Some(host) => builder.with_authority_host(host),
                None => builder,
            }
        }
        Auth::Anonymous => builder.with_skip_signature(true),
    };
    let store = builder.build().map_err(bad)?;
    Ok(Connection {
        store: Arc::new(store),
        endpoint: settings.endpoint,
        credentials: settings.source,
    })
}
