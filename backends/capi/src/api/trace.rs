//! `TRITONSERVER_InferenceTrace*`: requests are not traced into backend
//! libraries (`TRITONBACKEND_RequestTrace` gives none), so a backend has
//! no trace to ask about; the calls it would make exist and say so.

use std::ffi::{c_char, c_void};

use oxiserve_types::{Error, ErrorKind};

use crate::error::{ErrorHandle, status};

fn unsupported() -> *mut ErrorHandle {
    status(|| {
        Err(Error::new(
            ErrorKind::Unsupported,
            "tracing is not supported through this server's C API",
        ))
    })
}

/// `TRITONSERVER_InferenceTraceSpawnChildTrace`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceTraceSpawnChildTrace(
    _trace: *mut c_void,
    _child_trace: *mut *mut c_void,
) -> *mut ErrorHandle {
    unsupported()
}

/// `TRITONSERVER_InferenceTraceContext`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceTraceContext(
    _trace: *mut c_void,
    _trace_context: *mut *const c_char,
) -> *mut ErrorHandle {
    unsupported()
}
