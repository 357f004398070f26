//! `TRITONSERVER_InferenceRequest*` and `TRITONSERVER_ServerInferAsync`.

use std::ffi::{c_char, c_void};

use oxiserve_types::{Error, ErrorKind, ParameterValue, Result};

use crate::{
    allocator::AllocatorHandle,
    error::{ErrorHandle, arg, status, write},
    ffi::{c_string, null_argument, str_of},
    inference_request::{InferenceRequestHandle, ReleaseFn, infer},
    inference_response::{CompleteFn, ResponseRoute},
    request::Correlation,
    server::ServerHandle,
};

/// Runs `f` on the request `request` points to.
pub(super) fn with(
    request: *mut InferenceRequestHandle,
    f: impl FnOnce(&mut InferenceRequestHandle) -> Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a request the caller owns and builds on one thread.
        let request =
            unsafe { request.as_mut() }.ok_or_else(|| null_argument("inference_request"))?;
        f(request)
    })
}

/// The text `text` points to, or the null-argument error naming it.
pub(super) fn text<'a>(text: *const c_char, name: &str) -> Result<&'a str> {
    // SAFETY: null or a C string, as the API requires.
    unsafe { str_of(text) }.ok_or_else(|| null_argument(name))
}

/// `TRITONSERVER_InferenceRequestNew`: a request the caller owns. Whether
/// the model exists is found when the request runs.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestNew(
    inference_request: *mut *mut InferenceRequestHandle,
    server: *mut ServerHandle,
    model_name: *const c_char,
    model_version: i64,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or the server of a live model.
        let host = unsafe { arg(server, "server") }?.host();
        let name = text(model_name, "model_name")?;
        let handle = Box::into_raw(Box::new(InferenceRequestHandle::new(
            host,
            name,
            model_version,
        )));
        // SAFETY: an out-argument, null refused.
        unsafe { write(inference_request, "inference_request", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONSERVER_InferenceRequestDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestDelete(
    inference_request: *mut InferenceRequestHandle,
) -> *mut ErrorHandle {
    status(|| {
        if !inference_request.is_null() {
            // SAFETY: a request the caller owned and gives up.
            drop(unsafe { Box::from_raw(inference_request) });
        }
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestId(
    inference_request: *mut InferenceRequestHandle,
    id: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_request, |r| unsafe {
        write(id, "id", r.id.as_ptr())
    })
}

/// `TRITONSERVER_InferenceRequestSetId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetId(
    inference_request: *mut InferenceRequestHandle,
    id: *const c_char,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.id = c_string(text(id, "id")?);
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestFlags`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestFlags(
    inference_request: *mut InferenceRequestHandle,
    flags: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_request, |r| unsafe {
        write(flags, "flags", r.flags)
    })
}

/// `TRITONSERVER_InferenceRequestSetFlags`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetFlags(
    inference_request: *mut InferenceRequestHandle,
    flags: u32,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.flags = flags;
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestCorrelationId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestCorrelationId(
    inference_request: *mut InferenceRequestHandle,
    correlation_id: *mut u64,
) -> *mut ErrorHandle {
    with(inference_request, |r| match r.correlation {
        // SAFETY: an out-argument, null refused.
        Correlation::U64(id) => unsafe { write(correlation_id, "correlation_id", id) },
        Correlation::String(_) => Err(Error::invalid_arg(
            "given request's correlation id is not an unsigned int",
        )),
    })
}

/// `TRITONSERVER_InferenceRequestCorrelationIdString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestCorrelationIdString(
    inference_request: *mut InferenceRequestHandle,
    correlation_id: *mut *const c_char,
) -> *mut ErrorHandle {
    with(inference_request, |r| match &r.correlation {
        // SAFETY: an out-argument, null refused.
        Correlation::String(id) => unsafe { write(correlation_id, "correlation_id", id.as_ptr()) },
        Correlation::U64(_) => Err(Error::invalid_arg(
            "given request's correlation id is not a string",
        )),
    })
}

/// `TRITONSERVER_InferenceRequestSetCorrelationId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetCorrelationId(
    inference_request: *mut InferenceRequestHandle,
    correlation_id: u64,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.correlation = Correlation::U64(correlation_id);
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestSetCorrelationIdString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetCorrelationIdString(
    inference_request: *mut InferenceRequestHandle,
    correlation_id: *const c_char,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        let id = text(correlation_id, "correlation_id")?;
        if id.len() > 128 {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "string correlation ID cannot be longer than 128 characters",
            ));
        }
        r.correlation = Correlation::String(c_string(id));
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestCancel`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestCancel(
    inference_request: *mut InferenceRequestHandle,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.cancel.cancel();
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestIsCancelled`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestIsCancelled(
    inference_request: *mut InferenceRequestHandle,
    is_cancelled: *mut bool,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_request, |r| unsafe {
        write(is_cancelled, "is_cancelled", r.cancel.is_cancelled())
    })
}

/// `TRITONSERVER_InferenceRequestPriority`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestPriority(
    inference_request: *mut InferenceRequestHandle,
    priority: *mut u32,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        let value = u32::try_from(r.priority).map_err(|_| {
            Error::invalid_arg(format!(
                "request priority overflows uint32_t, use \
                 TRITONSERVER_InferenceRequestPriorityUInt64, priority={}",
                r.priority
            ))
        })?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(priority, "priority", value) }
    })
}

/// `TRITONSERVER_InferenceRequestPriorityUInt64`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestPriorityUInt64(
    inference_request: *mut InferenceRequestHandle,
    priority: *mut u64,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_request, |r| unsafe {
        write(priority, "priority", r.priority)
    })
}

/// `TRITONSERVER_InferenceRequestSetPriority`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetPriority(
    inference_request: *mut InferenceRequestHandle,
    priority: u32,
) -> *mut ErrorHandle {
    TRITONSERVER_InferenceRequestSetPriorityUInt64(inference_request, u64::from(priority))
}

/// `TRITONSERVER_InferenceRequestSetPriorityUInt64`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetPriorityUInt64(
    inference_request: *mut InferenceRequestHandle,
    priority: u64,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.priority = priority;
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestTimeoutMicroseconds`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestTimeoutMicroseconds(
    inference_request: *mut InferenceRequestHandle,
    timeout_us: *mut u64,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_request, |r| unsafe {
        write(timeout_us, "timeout_us", r.timeout_us)
    })
}

/// `TRITONSERVER_InferenceRequestSetTimeoutMicroseconds`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
    inference_request: *mut InferenceRequestHandle,
    timeout_us: u64,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.timeout_us = timeout_us;
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestSetReleaseCallback`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetReleaseCallback(
    inference_request: *mut InferenceRequestHandle,
    request_release_fn: Option<ReleaseFn>,
    request_release_userp: *mut c_void,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.release = request_release_fn.map(|f| (f, request_release_userp as usize));
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestSetResponseCallback`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetResponseCallback(
    inference_request: *mut InferenceRequestHandle,
    response_allocator: *mut AllocatorHandle,
    response_allocator_userp: *mut c_void,
    response_fn: Option<CompleteFn>,
    response_userp: *mut c_void,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        // SAFETY: null or a live allocator; its functions are copied.
        let functions = *unsafe { arg(response_allocator, "response_allocator") }?;
        r.route = Some(ResponseRoute {
            allocator: response_allocator as usize,
            functions,
            alloc_userp: response_allocator_userp as usize,
            complete: response_fn.ok_or_else(|| null_argument("response_fn"))?,
            response_userp: response_userp as usize,
        });
        Ok(())
    })
}

/// Sets parameter `name` of the request.
fn set_parameter(
    request: *mut InferenceRequestHandle,
    name: *const c_char,
    value: Result<ParameterValue>,
) -> *mut ErrorHandle {
    with(request, |r| {
        r.parameters.insert(text(name, "name")?.to_string(), value?);
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestSetStringParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetStringParameter(
    request: *mut InferenceRequestHandle,
    name: *const c_char,
    value: *const c_char,
) -> *mut ErrorHandle {
    let value = text(value, "value").map(|v| ParameterValue::String(v.to_string()));
    set_parameter(request, name, value)
}

/// `TRITONSERVER_InferenceRequestSetIntParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetIntParameter(
    request: *mut InferenceRequestHandle,
    name: *const c_char,
    value: i64,
) -> *mut ErrorHandle {
    set_parameter(request, name, Ok(ParameterValue::Int(value)))
}

/// `TRITONSERVER_InferenceRequestSetBoolParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetBoolParameter(
    request: *mut InferenceRequestHandle,
    name: *const c_char,
    value: bool,
) -> *mut ErrorHandle {
    set_parameter(request, name, Ok(ParameterValue::Bool(value)))
}

/// `TRITONSERVER_InferenceRequestSetDoubleParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestSetDoubleParameter(
    request: *mut InferenceRequestHandle,
    name: *const c_char,
    value: f64,
) -> *mut ErrorHandle {
    set_parameter(request, name, Ok(ParameterValue::Double(value)))
}

/// `TRITONSERVER_ServerInferAsync`: runs the request on its model; the
/// trace argument is ignored (backend requests are not traced here).
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerInferAsync(
    server: *mut ServerHandle,
    inference_request: *mut InferenceRequestHandle,
    _trace: *mut c_void,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or the server of a live model.
        unsafe { arg(server, "server") }?;
        if inference_request.is_null() {
            return Err(null_argument("inference_request"));
        }
        // SAFETY: a live request the caller owns.
        unsafe { infer(inference_request) }
    })
}
