//! `TRITONBACKEND_Request*`: a request's ids, flags, parameters, inputs
//! and requested outputs, and its release.

use std::ffi::{c_char, c_void};

use oxiserve_types::Error;

use crate::{
    error::{ErrorHandle, arg, status, write},
    ffi::{RELEASE_RESCHEDULE, str_of},
    request::{Correlation, InputHandle, RequestHandle},
};

/// Runs `f` on the request `request` points to.
fn with(
    request: *mut RequestHandle,
    f: impl FnOnce(&RequestHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a request the backend holds (not yet released).
        f(unsafe { arg(request, "request") }?)
    })
}

/// Triton's prefix for a request's errors.
fn log_request(request: &RequestHandle) -> String {
    let id = request.id();
    let id = if id.is_empty() { "<id_unknown>" } else { &id };
    format!("[request id: {id}] ")
}

/// `TRITONBACKEND_RequestId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestId(
    request: *mut RequestHandle,
    id: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe { write(id, "id", r.id.as_ptr()) })
}

/// `TRITONBACKEND_RequestIsCancelled`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestIsCancelled(
    request: *mut RequestHandle,
    is_cancelled: *mut bool,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe {
        write(is_cancelled, "is_cancelled", r.sink.is_cancelled())
    })
}

/// `TRITONBACKEND_RequestCorrelationId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestCorrelationId(
    request: *mut RequestHandle,
    id: *mut u64,
) -> *mut ErrorHandle {
    with(request, |r| match &r.correlation {
        // SAFETY: an out-argument, null refused.
        Correlation::U64(value) => unsafe { write(id, "id", *value) },
        Correlation::String(_) => Err(Error::invalid_arg(format!(
            "{}correlation ID in request is not an unsigned int",
            log_request(r)
        ))),
    })
}

/// `TRITONBACKEND_RequestCorrelationIdString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestCorrelationIdString(
    request: *mut RequestHandle,
    id: *mut *const c_char,
) -> *mut ErrorHandle {
    with(request, |r| match &r.correlation {
        // SAFETY: an out-argument, null refused.
        Correlation::String(value) => unsafe { write(id, "id", value.as_ptr()) },
        Correlation::U64(_) => Err(Error::invalid_arg(format!(
            "{}correlation ID in request is not a string",
            log_request(r)
        ))),
    })
}

/// `TRITONBACKEND_InferenceRequestTimeoutMicroseconds`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_InferenceRequestTimeoutMicroseconds(
    request: *mut RequestHandle,
    timeout: *mut u64,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe {
        write(timeout, "timeout", r.timeout_us)
    })
}

/// `TRITONBACKEND_RequestFlags`: `TRITONSERVER_REQUEST_FLAG_SEQUENCE_*`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestFlags(
    request: *mut RequestHandle,
    flags: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe { write(flags, "flags", r.flags) })
}

/// `TRITONBACKEND_RequestParameterCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestParameterCount(
    request: *mut RequestHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe {
        write(count, "count", r.parameters.len() as u32)
    })
}

/// `TRITONBACKEND_RequestParameter`: the value pointer is a `const char*`
/// for strings, else points to the `int64_t`, `bool` or `double`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestParameter(
    request: *mut RequestHandle,
    index: u32,
    key: *mut *const c_char,
    kind: *mut u32,
    vvalue: *mut *const c_void,
) -> *mut ErrorHandle {
    with(request, |r| {
        let parameter = r.parameters.get(index as usize).ok_or_else(|| {
            Error::invalid_arg(format!(
                "out of bounds index {index}: request has {} parameters",
                r.parameters.len()
            ))
        })?;
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(key, "key", parameter.name.as_ptr())?;
            write(kind, "type", parameter.value.type_code())?;
            write(vvalue, "vvalue", parameter.value.value_ptr())
        }
    })
}

/// `TRITONBACKEND_RequestInputCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestInputCount(
    request: *mut RequestHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe {
        write(count, "count", r.inputs.len() as u32)
    })
}

/// The input at `index`, or Triton's error.
fn input_at(request: &RequestHandle, index: u32) -> oxiserve_types::Result<&InputHandle> {
    request.inputs.get(index as usize).ok_or_else(|| {
        Error::invalid_arg(format!(
            "{}out of bounds index {index}: request has {} inputs",
            log_request(request),
            request.inputs.len()
        ))
    })
}

/// `TRITONBACKEND_RequestInputName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestInputName(
    request: *mut RequestHandle,
    index: u32,
    input_name: *mut *const c_char,
) -> *mut ErrorHandle {
    with(request, |r| {
        let input = input_at(r, index)?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(input_name, "input_name", input.name.as_ptr()) }
    })
}

/// `TRITONBACKEND_RequestInput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestInput(
    request: *mut RequestHandle,
    name: *const c_char,
    input: *mut *const InputHandle,
) -> *mut ErrorHandle {
    with(request, |r| {
        // SAFETY: null or a C string.
        let name = unsafe { str_of(name) }.ok_or_else(|| crate::ffi::null_argument("name"))?;
        let found = r.input(name).ok_or_else(|| {
            Error::invalid_arg(format!(
                "{}unknown request input name {name}",
                log_request(r)
            ))
        });
        // SAFETY: an out-argument, null refused.
        unsafe {
            write(
                input,
                "input",
                found.as_ref().map_or(std::ptr::null(), |i| *i),
            )
        }?;
        found.map(|_| ())
    })
}

/// `TRITONBACKEND_RequestInputByIndex`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestInputByIndex(
    request: *mut RequestHandle,
    index: u32,
    input: *mut *const InputHandle,
) -> *mut ErrorHandle {
    with(request, |r| {
        let found = input_at(r, index)?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(input, "input", found) }
    })
}

/// `TRITONBACKEND_RequestOutputCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestOutputCount(
    request: *mut RequestHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |r| unsafe {
        write(count, "count", r.outputs.len() as u32)
    })
}

/// `TRITONBACKEND_RequestOutputName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestOutputName(
    request: *mut RequestHandle,
    index: u32,
    output_name: *mut *const c_char,
) -> *mut ErrorHandle {
    with(request, |r| {
        let name = r.outputs.get(index as usize).ok_or_else(|| {
            Error::invalid_arg(format!(
                "{}out of bounds index {index}: request has {} requested outputs",
                log_request(r),
                r.outputs.len()
            ))
        })?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(output_name, "output_name", name.as_ptr()) }
    })
}

/// `TRITONBACKEND_RequestOutputBufferProperties`: as in Triton for a
/// client whose allocator has no query function.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestOutputBufferProperties(
    request: *mut RequestHandle,
    _name: *const c_char,
    _byte_size: *mut usize,
    _memory_type: *mut u32,
    _memory_type_id: *mut i64,
) -> *mut ErrorHandle {
    with(request, |r| {
        Err(Error::unavailable(format!(
            "{}Output properties are not available",
            log_request(r)
        )))
    })
}

/// `TRITONBACKEND_RequestRelease`: the backend gives the request back
/// (`RELEASE_ALL`), or hands it to its scheduler to run again
/// (`RELEASE_RESCHEDULE`). Its responses may still be sent through its
/// response factories.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestRelease(
    request: *mut RequestHandle,
    release_flags: u32,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a request the backend holds.
        let handle = unsafe { arg(request, "request") }?;
        if release_flags & RELEASE_RESCHEDULE != 0 {
            handle.sink.reschedule()?;
        }
        handle.outstanding.lock().remove(&(request as usize));
        // SAFETY: made by Box::into_raw when its batch was built; the
        // backend owned it and gives it up now.
        drop(unsafe { Box::from_raw(request) });
        Ok(())
    })
}

/// `TRITONBACKEND_RequestTrace`: no trace (requests are not traced into
/// backend libraries).
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_RequestTrace(
    request: *mut RequestHandle,
    trace: *mut *mut c_void,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(request, |_| unsafe {
        write(trace, "trace", std::ptr::null_mut())
    })
}
