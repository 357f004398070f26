//! Which part of a remote repository a failed request says is wrong: the
//! endpoint (nothing answers), the bucket or container, or the credentials.
//! S3, GCS's XML API and Azure answer with an XML `<Error>` whose `<Code>`
//! says; a bare 401 or 403 blames the credentials too.

use std::error::Error as _;

use object_store::client::{HttpError, HttpErrorKind};

/// What a failed request blames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Nothing answered at the endpoint: refused, unknown host, timed out.
    Endpoint(String),
    /// The store has no such bucket or container (`NoSuchBucket`,
    /// `ContainerNotFound`).
    Bucket(String),
    /// The store rejected the credentials (`InvalidAccessKeyId`,
    /// `SignatureDoesNotMatch`, `AccessDenied`, `AuthenticationFailed`, ...).
    Credentials(String),
    /// Anything else, as the client put it.
    Other(String),
}

/// Error codes of a missing bucket (S3, GCS) or container (Azure); a list
/// request's bare 404 says the same.
const BUCKET_CODES: &[&str] = &["NoSuchBucket", "ContainerNotFound"];

/// Error codes that reject the credentials or what they may do: S3's and
/// GCS's, then Azure's.
const CREDENTIAL_CODES: &[&str] = &[
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "InvalidToken",
    "ExpiredToken",
    "TokenRefreshRequired",
    "AllAccessDisabled",
    "AuthenticationRequired",
    "AuthenticationFailed",
    "AuthorizationFailure",
    "AuthorizationPermissionMismatch",
    "InsufficientAccountPermissions",
    "NoAuthenticationInformation",
    "InvalidAuthenticationInfo",
    "PublicAccessNotPermitted",
];

impl Failure {
    /// Classifies an object store error.
    pub fn of(error: &object_store::Error) -> Self {
        let mut source: Option<&(dyn std::error::Error + 'static)> = error.source();
        while let Some(e) = source {
            if let Some(http) = e.downcast_ref::<HttpError>()
                && matches!(http.kind(), HttpErrorKind::Connect | HttpErrorKind::Timeout)
            {
                return Self::Endpoint(innermost(http));
            }
            source = e.source();
        }
        Self::of_response(&error.to_string())
    }

    /// Classifies an error by the error code in its response body, else by
    /// its HTTP status.
    fn of_response(text: &str) -> Self {
        let status = status(text);
        let rejected = matches!(status, Some(401 | 403));
        let Some(code) = element(text, "Code") else {
            // Listing 404s only when there is no bucket or container.
            let no_bucket = status == Some(404) && text.contains("list request");
            let detail = text.to_string();
            return match (rejected, no_bucket) {
                (true, _) => Self::Credentials(detail),
                (_, true) => Self::Bucket(detail),
                _ => Self::Other(detail),
            };
        };
        // Azure's message goes on with request id and time lines.
        let detail = match element(text, "Message").and_then(|m| m.lines().next()) {
            Some(message) => format!("{code}: {}", message.trim()),
            None => code.to_string(),
        };
        match code {
            c if BUCKET_CODES.contains(&c) => Self::Bucket(detail),
            c if CREDENTIAL_CODES.contains(&c) || rejected => Self::Credentials(detail),
            _ => Self::Other(detail),
        }
    }
}

/// The HTTP status the client's error text reports ("status code: 403").
fn status(text: &str) -> Option<u16> {
    let start = text.find("status code: ")? + "status code: ".len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The text of the first `<name>` element of an XML error body.
fn element<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let start = text.find(&format!("<{name}>"))? + name.len() + 2;
    let end = text[start..].find(&format!("</{name}>"))? + start;
    Some(text[start..end].trim())
}

/// The deepest cause's message ("Connection refused", "failed to lookup
/// address information"): what a person can act on.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut deepest = error;
    while let Some(next) = deepest.source() {
        deepest = next;
    }
    deepest.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(code: &str) -> String {
        format!(
            "Generic S3 error: Error performing list request: Server returned non-2xx status code: \
             403 Forbidden: <?xml version=\"1.0\"?><Error><Code>{code}</Code>\
             <Message>explained</Message></Error>"
        )
    }

    #[test]
    fn codes_name_the_part() {
        assert_eq!(
            Failure::of_response(&body("NoSuchBucket")),
            Failure::Bucket("NoSuchBucket: explained".into())
        );
        for code in [
            "InvalidAccessKeyId",
            "SignatureDoesNotMatch",
            "AccessDenied",
        ] {
            assert_eq!(
                Failure::of_response(&body(code)),
                Failure::Credentials(format!("{code}: explained"))
            );
        }
        assert_eq!(
            Failure::of_response(&body("SlowDown").replace("403 Forbidden", "503 Slow Down")),
            Failure::Other("SlowDown: explained".into())
        );
    }

    #[test]
    fn a_failed_connection_blames_the_endpoint() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let error = object_store::Error::Generic {
            store: "S3",
            source: Box::new(HttpError::new(HttpErrorKind::Connect, refused)),
        };
        assert_eq!(
            Failure::of(&error),
            Failure::Endpoint("connection refused".into())
        );
    }

    #[test]
    fn azure_codes_and_bare_statuses() {
        let azure = "Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\"?>\
                     <Error><Code>ContainerNotFound</Code><Message>The specified container does \
                     not exist.\nRequestId:1\nTime:now</Message></Error>";
        assert_eq!(
            Failure::of_response(azure),
            Failure::Bucket("ContainerNotFound: The specified container does not exist.".into())
        );
        assert_eq!(
            Failure::of_response(&body("AuthenticationFailed")),
            Failure::Credentials("AuthenticationFailed: explained".into())
        );
        let bare = "Server returned non-2xx status code: 401 Unauthorized: ";
        assert_eq!(
            Failure::of_response(bare),
            Failure::Credentials(bare.into())
        );
        let listed = "Error performing list request: Server returned non-2xx status code: \
                      404 Not Found: Not Found";
        assert_eq!(Failure::of_response(listed), Failure::Bucket(listed.into()));
        let fetched = listed.replace("list", "get");
        assert_eq!(
            Failure::of_response(&fetched),
            Failure::Other(fetched.clone())
        );
    }

    #[test]
    fn no_code_keeps_the_text() {
        assert_eq!(
            Failure::of_response("timed out"),
            Failure::Other("timed out".into())
        );
    }
}
