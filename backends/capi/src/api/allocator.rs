//! `TRITONSERVER_ResponseAllocator*`.

use crate::{
    allocator::{AllocFn, AllocatorHandle, BufferAttributesFn, QueryFn, ReleaseFn, StartFn},
    error::{ErrorHandle, status, write},
    ffi::null_argument,
};

/// `TRITONSERVER_ResponseAllocatorNew`: an allocator the caller owns.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ResponseAllocatorNew(
    allocator: *mut *mut AllocatorHandle,
    alloc_fn: Option<AllocFn>,
    release_fn: Option<ReleaseFn>,
    start_fn: Option<StartFn>,
) -> *mut ErrorHandle {
    status(|| {
        let handle = AllocatorHandle {
            alloc: alloc_fn.ok_or_else(|| null_argument("alloc_fn"))?,
            release: release_fn.ok_or_else(|| null_argument("release_fn"))?,
            start: start_fn,
            query: None,
            buffer_attributes: None,
        };
        let handle = Box::into_raw(Box::new(handle));
        // SAFETY: an out-argument, null refused.
        unsafe { write(allocator, "allocator", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// Runs `f` on the allocator `allocator` points to.
fn with(allocator: *mut AllocatorHandle, f: impl FnOnce(&mut AllocatorHandle)) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or an allocator the caller owns and sets up on one thread.
        let allocator = unsafe { allocator.as_mut() }.ok_or_else(|| null_argument("allocator"))?;
        f(allocator);
        Ok(())
    })
}

/// `TRITONSERVER_ResponseAllocatorSetQueryFunction`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ResponseAllocatorSetQueryFunction(
    allocator: *mut AllocatorHandle,
    query_fn: Option<QueryFn>,
) -> *mut ErrorHandle {
    with(allocator, |a| a.query = query_fn)
}

/// `TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ResponseAllocatorSetBufferAttributesFunction(
    allocator: *mut AllocatorHandle,
    buffer_attributes_fn: Option<BufferAttributesFn>,
) -> *mut ErrorHandle {
    with(allocator, |a| a.buffer_attributes = buffer_attributes_fn)
}

/// `TRITONSERVER_ResponseAllocatorDelete`: responses already made keep
/// what they need of it.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ResponseAllocatorDelete(
    allocator: *mut AllocatorHandle,
) -> *mut ErrorHandle {
    status(|| {
        if !allocator.is_null() {
            // SAFETY: an allocator the caller owned and gives up.
            drop(unsafe { Box::from_raw(allocator) });
        }
        Ok(())
    })
}
