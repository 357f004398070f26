//! The TLS files an endpoint's SSL flags name, checked before it binds.

use oxiserve_tls::TlsFiles;

use crate::cli::endpoints::SslFlags;

/// The files of `flags` when SSL is on (`--<protocol>-use-ssl`, implied by
/// `--<protocol>-use-ssl-mutual`); `None` when it is off, when, as in
/// Triton, the certificate flags are ignored. A missing flag is named.
pub(super) fn files(flags: SslFlags<'_>) -> Result<Option<TlsFiles>, String> {
    if !flags.use_ssl {
        return Ok(None);
    }
    let protocol = flags.protocol;
    let asked_by = match flags.mutual {
        true => format!("--{protocol}-use-ssl-mutual"),
        false => format!("--{protocol}-use-ssl"),
    };
    let needs = |path: Option<&std::path::Path>, flag: &str| {
        path.map(std::path::Path::to_path_buf)
            .ok_or_else(|| format!("{asked_by} needs --{protocol}-{flag} (a PEM file)"))
    };
    Ok(Some(TlsFiles {
        cert: needs(flags.server_cert, "server-cert")?,
        key: needs(flags.server_key, "server-key")?,
        root: match flags.mutual {
            true => Some(needs(flags.root_cert, "root-cert")?),
            false => None,
        },
        mutual: flags.mutual,
    }))
}
