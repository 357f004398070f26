//! Protocol-neutral errors; each frontend maps `ErrorKind` to its own codes.

use std::fmt;

/// What went wrong, in Triton's error vocabulary (`TRITONSERVER_ERROR_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request or configuration is malformed.
    InvalidArg,
    /// A model, version, tensor or region does not exist.
    NotFound,
    /// The target exists but cannot serve now (model not ready, shutting down).
    Unavailable,
    /// The feature is not supported by this server or model.
    Unsupported,
    /// Something already exists under that name.
    AlreadyExists,
    /// A queue or limit is full.
    ResourceExhausted,
    /// The request was cancelled or its deadline passed.
    Cancelled,
    /// A bug or an unexpected failure inside the server or a backend.
    Internal,
    /// A model reported an error of no particular kind (`TritonError.UNKNOWN`).
    Unknown,
}

/// An error with its kind and a message a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

/// `Result` with oxiserve's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// An [`ErrorKind::InvalidArg`] error.
    pub fn invalid_arg(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArg, message)
    }

    /// An [`ErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// An [`ErrorKind::Unavailable`] error.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// An [`ErrorKind::Internal`] error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
