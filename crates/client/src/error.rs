//! One error type for every call: the server's refusal with its status and
//! message, or why no answer came.

/// `Result` with the client's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused an HTTP request: its status and its `error` message.
    #[error("{message} (HTTP status {status})")]
    Http {
        /// The HTTP status code (400, 404, 500, ...).
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The server ended a gRPC call with a status other than OK.
    #[error("{message} (gRPC status {code:?})")]
    Grpc {
        /// The gRPC status code.
        code: tonic::Code,
        /// The server's message.
        message: String,
    },
    /// One request of a `ModelStreamInfer` stream failed (its
    /// `error_message`); the stream goes on.
    #[error("{0}")]
    Stream(String),
    /// No answer: the server could not be reached or the connection broke.
    #[error("cannot reach the server: {0}")]
    Transport(String),
    /// An answer that does not follow the KServe v2 protocol.
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
    /// A request or a read the client refuses before anything is sent: a
    /// wrong datatype, shape or output name, a bad URL.
    #[error("{0}")]
    InvalidArg(String),
    /// A shared memory region could not be created, read or written.
    #[error("shared memory region '{key}': {source}")]
    SharedMemory {
        /// The region's `shm_open` key.
        key: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl Error {
    /// The message of the server (or of the client, for errors made here).
    pub fn message(&self) -> String {
        match self {
            Error::Http { message, .. } | Error::Grpc { message, .. } => message.clone(),
            Error::Stream(message) => message.clone(),
            other => other.to_string(),
        }
    }

    /// The HTTP status of a refused HTTP request.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The gRPC status code of a failed gRPC call.
    pub fn grpc_code(&self) -> Option<tonic::Code> {
        match self {
            Error::Grpc { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Error::Protocol(message.into())
    }

    pub(crate) fn invalid_arg(message: impl Into<String>) -> Self {
        Error::InvalidArg(message.into())
    }
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Error::Grpc {
            code: status.code(),
            message: status.message().to_string(),
        }
    }
}

impl From<tonic::transport::Error> for Error {
    fn from(e: tonic::transport::Error) -> Self {
        Error::Transport(with_sources(&e))
    }
}

impl From<reqwest::Error> for Error {
    fn from(e: reqwest::Error) -> Self {
        Error::Transport(with_sources(&e))
    }
}

/// An error's text followed by its causes' (`a: b: c`).
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}
