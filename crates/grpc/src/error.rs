//! Errors as gRPC statuses, with the codes Triton gives each kind.

use oxiserve_types::{Error, ErrorKind};
use tonic::{Code, Status};

/// The gRPC code Triton's gRPC endpoint gives an error of `kind`.
pub fn code_for(kind: ErrorKind) -> Code {
    match kind {
        ErrorKind::InvalidArg => Code::InvalidArgument,
        ErrorKind::NotFound => Code::NotFound,
        ErrorKind::Unavailable => Code::Unavailable,
        ErrorKind::Unsupported => Code::Unimplemented,
        ErrorKind::AlreadyExists => Code::AlreadyExists,
        ErrorKind::ResourceExhausted => Code::ResourceExhausted,
        ErrorKind::Cancelled => Code::Cancelled,
        ErrorKind::Internal => Code::Internal,
        ErrorKind::Unknown => Code::Unknown,
    }
}

/// `error` as the status a call ends with.
pub fn status(error: Error) -> Status {
    Status::new(code_for(error.kind), error.message)
}

/// A blocking task that did not finish (it panicked).
pub(crate) fn join_error(error: tokio::task::JoinError) -> Status {
    Status::internal(error.to_string())
}
