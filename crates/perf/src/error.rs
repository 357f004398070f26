//! One error type: a message for the user, with the cause folded in.

use std::fmt;

/// A failure worth telling the user about; the tool exits 1 with it.
#[derive(Debug)]
pub struct Error(String);

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Error(message.into())
    }

    /// This error with `context: ` in front.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error(format!("{context}: {}", self.0))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error(e.to_string())
    }
}

impl From<hyper::Error> for Error {
    fn from(e: hyper::Error) -> Self {
        match std::error::Error::source(&e) {
            Some(cause) => Error(format!("{e}: {cause}")),
            None => Error(e.to_string()),
        }
    }
}

impl From<oxiserve_client::Error> for Error {
    fn from(e: oxiserve_client::Error) -> Self {
        Error(e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error(e.to_string())
    }
}
