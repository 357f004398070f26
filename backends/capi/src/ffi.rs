//! The C side's vocabulary: Triton's enum values, C strings, and the
//! checks every exported function makes on the pointers it is given.

use std::{
    ffi::{CStr, CString, c_char},
    path::Path,
};

use oxiserve_types::{DataType, Error, ErrorKind};

/// `TRITONSERVER_MEMORY_CPU`.
pub const MEMORY_CPU: u32 = 0;
/// `TRITONSERVER_MEMORY_CPU_PINNED`.
pub const MEMORY_CPU_PINNED: u32 = 1;
/// `TRITONSERVER_MEMORY_GPU`.
pub const MEMORY_GPU: u32 = 2;

/// `TRITONSERVER_PARAMETER_*`.
pub const PARAMETER_STRING: u32 = 0;
pub const PARAMETER_INT: u32 = 1;
pub const PARAMETER_BOOL: u32 = 2;
pub const PARAMETER_DOUBLE: u32 = 3;
pub const PARAMETER_BYTES: u32 = 4;

/// `TRITONSERVER_INSTANCEGROUPKIND_*`.
pub const KIND_CPU: u32 = 1;
pub const KIND_GPU: u32 = 2;
pub const KIND_MODEL: u32 = 3;

/// `TRITONSERVER_REQUEST_FLAG_SEQUENCE_START` / `_END`.
pub const SEQUENCE_START: u32 = 1;
pub const SEQUENCE_END: u32 = 2;

/// `TRITONSERVER_REQUEST_RELEASE_RESCHEDULE`.
pub const RELEASE_RESCHEDULE: u32 = 2;

/// `TRITONSERVER_RESPONSE_COMPLETE_FINAL`.
pub const RESPONSE_FINAL: u32 = 1;

/// `TRITONSERVER_Error_Code`, in Triton's order.
const ERROR_CODES: [ErrorKind; 8] = [
    ErrorKind::Unknown,
    ErrorKind::Internal,
    ErrorKind::NotFound,
    ErrorKind::InvalidArg,
    ErrorKind::Unavailable,
    ErrorKind::Unsupported,
    ErrorKind::AlreadyExists,
    ErrorKind::Cancelled,
];

/// The `TRITONSERVER_Error_Code` of `kind` (Triton has no code for a full
/// queue: it reports one as unavailable).
pub fn error_code(kind: ErrorKind) -> u32 {
    let kind = match kind {
        ErrorKind::ResourceExhausted => ErrorKind::Unavailable,
        other => other,
    };
    ERROR_CODES.iter().position(|&k| k == kind).unwrap_or(0) as u32
}

/// The kind of a `TRITONSERVER_Error_Code` (unknown codes are `Unknown`).
pub fn error_kind(code: u32) -> ErrorKind {
    ERROR_CODES
        .get(code as usize)
        .copied()
        .unwrap_or(ErrorKind::Unknown)
}

/// The `TRITONSERVER_DataType` of `dtype` (the numbers of Triton's
/// `inference.DataType`, BYTES where the configuration says STRING).
pub fn data_type_code(dtype: DataType) -> u32 {
    dtype.config_number() as u32
}

/// The data type of a `TRITONSERVER_DataType`; `None` for INVALID.
pub fn data_type(code: u32) -> Option<DataType> {
    i32::try_from(code)
        .ok()
        .and_then(DataType::from_config_number)
}

/// A C string's text; `None` for a null pointer or text that is not UTF-8.
///
/// # Safety
/// `text` is null or points to a NUL-terminated string that lives for `'a`.
pub unsafe fn str_of<'a>(text: *const c_char) -> Option<&'a str> {
    if text.is_null() {
        return None;
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string
    // living for 'a.
    unsafe { CStr::from_ptr(text) }.to_str().ok()
}

/// `text` as a C string, any NUL in it cut off there (Triton's strings
/// never hold one).
pub fn c_string(text: &str) -> CString {
    let end = text.find('\0').unwrap_or(text.len());
    CString::new(&text[..end]).unwrap_or_default()
}

/// A path as a C string.
pub fn c_path(path: &Path) -> CString {
    c_string(&path.to_string_lossy())
}

/// The error a function returns for a null pointer argument: Triton's
/// "`<name>` was nullptr".
pub fn null_argument(name: &str) -> Error {
    Error::invalid_arg(format!("{name} was nullptr"))
}

/// Writes `value` through `out` when it is not null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-null, and the caller promises it is valid for writes.
        unsafe { out.write(value) };
    }
}

/// What `dlopen` or `dlsym` said (`dlerror`), for a failed `libloading` call.
pub fn dl_message(error: &libloading::Error) -> String {
    match std::error::Error::source(error) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}
