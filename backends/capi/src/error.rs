//! `TRITONSERVER_Error`: an error code and message, owned by whoever holds
//! the pointer until `TRITONSERVER_ErrorDelete`.

use std::{
    ffi::CString,
    panic::{AssertUnwindSafe, catch_unwind},
    ptr,
};

use oxiserve_types::{Error, Result};

use crate::ffi::{c_string, error_code, error_kind, null_argument};

/// The object behind a `TRITONSERVER_Error*`.
#[derive(Debug)]
pub struct ErrorHandle {
    pub code: u32,
    pub message: CString,
}

impl ErrorHandle {
    /// A new error for C, which owns it until it deletes it.
    pub fn into_raw(error: Error) -> *mut ErrorHandle {
        Box::into_raw(Box::new(ErrorHandle {
            code: error_code(error.kind),
            message: c_string(&error.message),
        }))
    }

    /// The error `handle` holds.
    pub fn to_error(&self) -> Error {
        Error::new(
            error_kind(self.code),
            self.message.to_string_lossy().into_owned(),
        )
    }

    /// Takes back an error a backend returned: reads and deletes it; `None`
    /// for null (success).
    ///
    /// # Safety
    /// `error` is null or a live error from `TRITONSERVER_ErrorNew` that
    /// nothing else uses afterwards.
    pub unsafe fn take(error: *mut ErrorHandle) -> Option<Error> {
        if error.is_null() {
            return None;
        }
        // SAFETY: a live error made by `into_raw`, handed over by the caller.
        let handle = unsafe { Box::from_raw(error) };
        Some(handle.to_error())
    }
}

/// What an exported function returns for `result`: null on success, else a
/// new error. A panic inside becomes an internal error instead of crossing
/// into C.
pub fn status(call: impl FnOnce() -> Result<()>) -> *mut ErrorHandle {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(())) => ptr::null_mut(),
        Ok(Err(error)) => ErrorHandle::into_raw(error),
        Err(_) => ErrorHandle::into_raw(Error::internal(
            "oxiserve panicked in a C API call; this is a bug",
        )),
    }
}

/// `ptr` as a reference, or Triton's error for a null argument `name`.
///
/// # Safety
/// `ptr` is null or points to a live `T` not mutated elsewhere during `'a`.
pub unsafe fn arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T> {
    // SAFETY: null is refused; otherwise the caller's promise.
    unsafe { ptr.as_ref() }.ok_or_else(|| null_argument(name))
}

/// The `count` dimensions at `shape` (which may be null when there are
/// none), or Triton's error for a null argument `shape`.
///
/// # Safety
/// `shape` is null or points to `count` readable `i64`s.
pub unsafe fn shape_arg(shape: *const i64, count: usize) -> Result<Vec<i64>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if shape.is_null() {
        return Err(null_argument("shape"));
    }
    // SAFETY: non-null, and the caller gives `count` dimensions there.
    Ok(unsafe { std::slice::from_raw_parts(shape, count) }.to_vec())
}

/// Writes `value` through the out-argument `out`, or returns Triton's error
/// for a null argument `name`.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub unsafe fn write<T>(out: *mut T, name: &str, value: T) -> Result<()> {
    if out.is_null() {
        return Err(null_argument(name));
    }
    // SAFETY: non-null, and the caller promises it is valid for writes.
    unsafe { out.write(value) };
    Ok(())
}
