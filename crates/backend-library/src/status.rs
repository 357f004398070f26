//! Errors across the C API: ours become `TRITONSERVER_Error`s the host
//! owns, the host's become ours; panics never cross it.

use std::{
    ffi::{CStr, CString, c_char},
    panic::{AssertUnwindSafe, catch_unwind},
};

use oxiserve_types::{Error, ErrorKind, Result};

use crate::abi::{self, TRITONSERVER_Error, error_code};

/// What a host function or an entry point returns: null for success.
pub type Status = *mut TRITONSERVER_Error;

/// The host's answer as ours; frees the host's error.
pub(crate) fn check(status: Status) -> Result<()> {
    if status.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null status is an error the host made and handed to
    // us; we read it and delete it once, as the API says the receiver does.
    let (code, message) = unsafe {
        let code = abi::TRITONSERVER_ErrorCode(status);
        let message = text(abi::TRITONSERVER_ErrorMessage(status));
        abi::TRITONSERVER_ErrorDelete(status);
        (code, message)
    };
    Err(Error::new(kind_of(code), message))
}

/// Our error as a new host error, owned by whoever receives it.
pub(crate) fn to_status(error: &Error) -> Status {
    let message = CString::new(error.message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the host copies the message; the pointer outlives the call.
    unsafe { abi::TRITONSERVER_ErrorNew(code_of(error.kind), message.as_ptr()) }
}

/// Runs an entry point's body: its error, or a panic in it, becomes the
/// status the host receives (a panic must not unwind into C).
pub(crate) fn guard(what: &str, body: impl FnOnce() -> Result<()>) -> Status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(error)) => to_status(&error),
        Err(panic) => {
            let reason = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            to_status(&Error::internal(format!("{what} panicked: {reason}")))
        }
    }
}

/// A C string the host handed out, as an owned string (empty for null).
pub(crate) fn text(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: the host's strings are NUL-terminated and live at least as
    // long as the call that returned them.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// A Rust string for the host (interior NULs would end it early: none in
/// tensor or parameter names that passed validation).
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

fn code_of(kind: ErrorKind) -> u32 {
    match kind {
        ErrorKind::InvalidArg => error_code::INVALID_ARG,
        ErrorKind::NotFound => error_code::NOT_FOUND,
        ErrorKind::Unavailable | ErrorKind::ResourceExhausted => error_code::UNAVAILABLE,
        ErrorKind::Unsupported => error_code::UNSUPPORTED,
        ErrorKind::AlreadyExists => error_code::ALREADY_EXISTS,
        ErrorKind::Cancelled => error_code::CANCELLED,
        ErrorKind::Internal => error_code::INTERNAL,
        ErrorKind::Unknown => error_code::UNKNOWN,
    }
}

fn kind_of(code: u32) -> ErrorKind {
    match code {
        error_code::INTERNAL => ErrorKind::Internal,
        error_code::NOT_FOUND => ErrorKind::NotFound,
        error_code::INVALID_ARG => ErrorKind::InvalidArg,
        error_code::UNAVAILABLE => ErrorKind::Unavailable,
        error_code::UNSUPPORTED => ErrorKind::Unsupported,
        error_code::ALREADY_EXISTS => ErrorKind::AlreadyExists,
        error_code::CANCELLED => ErrorKind::Cancelled,
        _ => ErrorKind::Unknown,
    }
}
