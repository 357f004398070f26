//! `TRITONBACKEND_ResponseFactory*`: a request's answering end that outlives
//! the request (decoupled models answer from it after releasing it).

use std::sync::Arc;

use crate::{
    error::{ErrorHandle, arg, status, write},
    ffi::RESPONSE_FINAL,
    request::RequestHandle,
    sink::SharedSink,
};

/// The object behind a `TRITONBACKEND_ResponseFactory*`.
pub type FactoryHandle = Arc<SharedSink>;

/// `TRITONBACKEND_ResponseFactoryNew`: a factory the caller owns.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseFactoryNew(
    factory: *mut *mut FactoryHandle,
    request: *mut RequestHandle,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a request the backend holds.
        let request = unsafe { arg(request, "request") }?;
        let handle = Box::into_raw(Box::new(request.sink.clone()));
        // SAFETY: an out-argument, null refused.
        unsafe { write(factory, "factory", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONBACKEND_ResponseFactoryDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseFactoryDelete(
    factory: *mut FactoryHandle,
) -> *mut ErrorHandle {
    status(|| {
        if factory.is_null() {
            return Err(crate::ffi::null_argument("factory"));
        }
        // SAFETY: a factory the caller owned and gives up.
        drop(unsafe { Box::from_raw(factory) });
        Ok(())
    })
}

/// `TRITONBACKEND_ResponseFactorySendFlags`: the final flag alone ends the
/// request's responses.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseFactorySendFlags(
    factory: *mut FactoryHandle,
    send_flags: u32,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live factory.
        let sink = unsafe { arg(factory, "factory") }?;
        sink.send_flags(send_flags & RESPONSE_FINAL != 0)
    })
}

/// `TRITONBACKEND_ResponseFactoryIsCancelled`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseFactoryIsCancelled(
    factory: *mut FactoryHandle,
    is_cancelled: *mut bool,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live factory.
        let sink = unsafe { arg(factory, "factory") }?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(is_cancelled, "is_cancelled", sink.is_cancelled()) }
    })
}
