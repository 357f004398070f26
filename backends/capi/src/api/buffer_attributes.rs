//! `TRITONSERVER_BufferAttributes*`.

use std::ffi::c_void;

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, status, write},
};

/// `TRITONSERVER_BufferAttributesNew`: attributes the caller owns (0 bytes of CPU memory).
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesNew(
    buffer_attributes: *mut *mut BufferAttributesHandle,
) -> *mut ErrorHandle {
    status(|| {
        let handle = Box::into_raw(Box::new(BufferAttributesHandle::cpu(0)));
        // SAFETY: an out-argument, null refused.
        unsafe { write(buffer_attributes, "buffer_attributes", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONSERVER_BufferAttributesDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesDelete(
    buffer_attributes: *mut BufferAttributesHandle,
) -> *mut ErrorHandle {
    status(|| {
        if !buffer_attributes.is_null() {
            // SAFETY: attributes the caller owned (from
            // TRITONSERVER_BufferAttributesNew) and gives up.
            drop(unsafe { Box::from_raw(buffer_attributes) });
        }
        Ok(())
    })
}

/// Runs `f` on the attributes `buffer_attributes` points to.
fn with(
    buffer_attributes: *mut BufferAttributesHandle,
    f: impl FnOnce(&BufferAttributesHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or live attributes.
        f(unsafe { arg(buffer_attributes, "buffer_attributes") }?)
    })
}

/// `TRITONSERVER_BufferAttributesSetMemoryTypeId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesSetMemoryTypeId(
    buffer_attributes: *mut BufferAttributesHandle,
    memory_type_id: i64,
) -> *mut ErrorHandle {
    with(buffer_attributes, |a| {
        a.set_memory_type_id(memory_type_id);
        Ok(())
    })
}

/// `TRITONSERVER_BufferAttributesSetMemoryType`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesSetMemoryType(
    buffer_attributes: *mut BufferAttributesHandle,
    memory_type: u32,
) -> *mut ErrorHandle {
    with(buffer_attributes, |a| {
        a.set_memory_type(memory_type);
        Ok(())
    })
}

/// `TRITONSERVER_BufferAttributesSetCudaIpcHandle`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesSetCudaIpcHandle(
    buffer_attributes: *mut BufferAttributesHandle,
    cuda_ipc_handle: *mut c_void,
) -> *mut ErrorHandle {
    with(buffer_attributes, |a| {
        a.set_cuda_ipc_handle(cuda_ipc_handle as usize);
        Ok(())
    })
}

/// `TRITONSERVER_BufferAttributesSetByteSize`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesSetByteSize(
    buffer_attributes: *mut BufferAttributesHandle,
    byte_size: usize,
) -> *mut ErrorHandle {
    with(buffer_attributes, |a| {
        a.set_byte_size(byte_size);
        Ok(())
    })
}

/// `TRITONSERVER_BufferAttributesMemoryTypeId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesMemoryTypeId(
    buffer_attributes: *mut BufferAttributesHandle,
    memory_type_id: *mut i64,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(buffer_attributes, |a| unsafe {
        write(memory_type_id, "memory_type_id", a.memory_type_id())
    })
}

/// `TRITONSERVER_BufferAttributesMemoryType`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesMemoryType(
    buffer_attributes: *mut BufferAttributesHandle,
    memory_type: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(buffer_attributes, |a| unsafe {
        write(memory_type, "memory_type", a.memory_type())
    })
}

/// `TRITONSERVER_BufferAttributesCudaIpcHandle`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesCudaIpcHandle(
    buffer_attributes: *mut BufferAttributesHandle,
    cuda_ipc_handle: *mut *mut c_void,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(buffer_attributes, |a| unsafe {
        write(
            cuda_ipc_handle,
            "cuda_ipc_handle",
            a.cuda_ipc_handle() as *mut c_void,
        )
    })
}

/// `TRITONSERVER_BufferAttributesByteSize`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_BufferAttributesByteSize(
    buffer_attributes: *mut BufferAttributesHandle,
    byte_size: *mut usize,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(buffer_attributes, |a| unsafe {
        write(byte_size, "byte_size", a.byte_size())
    })
}
