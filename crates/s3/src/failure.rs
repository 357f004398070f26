//! Which part of an S3 repository a failed request says is wrong: the
//! endpoint (nothing answers), the bucket, or the credentials.

use std::error::Error as _;

use object_store::client::{HttpError, HttpErrorKind};

/// What a failed request blames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Nothing answered at the endpoint: refused, unknown host, timed out.
    Endpoint(String),
    /// The store has no such bucket (`NoSuchBucket`).
    Bucket(String),
    /// The store rejected the credentials (`InvalidAccessKeyId`,
    /// `SignatureDoesNotMatch`, `AccessDenied`, ...).
    Credentials(String),
    /// Anything else, as the client put it.
    Other(String),
}

/// S3 error codes that reject the credentials or what they may do.
const CREDENTIAL_CODES: &[&str] = &[
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "InvalidToken",
    "ExpiredToken",
    "TokenRefreshRequired",
    "AllAccessDisabled",
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

    /// Classifies an error by the S3 error code in its response body.
    fn of_response(text: &str) -> Self {
        let Some(code) = element(text, "Code") else {
            return Self::Other(text.to_string());
        };
        let detail = match element(text, "Message") {
            Some(message) => format!("{code}: {message}"),
            None => code.to_string(),
        };
        match code {
            "NoSuchBucket" => Self::Bucket(detail),
            c if CREDENTIAL_CODES.contains(&c) => Self::Credentials(detail),
            _ => Self::Other(detail),
        }
    }
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
            Failure::of_response(&body("SlowDown")),
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
    fn no_code_keeps_the_text() {
        assert_eq!(
            Failure::of_response("timed out"),
            Failure::Other("timed out".into())
        );
    }
}
