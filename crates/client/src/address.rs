//! Server addresses as both clients take them.

/// `url` (`host:port`, or `http://host:port`) with the `http://` scheme.
pub(crate) fn with_scheme(url: &str) -> String {
    match url.contains("://") {
        true => url.to_string(),
        false => format!("http://{url}"),
    }
}
