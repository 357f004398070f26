//! `TRITONBACKEND_Input*`: an input's properties and its one buffer (CPU
//! memory; a host policy changes nothing here).

use std::ffi::{c_char, c_void};

use oxiserve_types::Error;

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, status, write},
    ffi::{MEMORY_CPU, data_type_code, put},
    request::InputHandle,
};

/// Runs `f` on the input `input` points to.
fn with(
    input: *mut InputHandle,
    f: impl FnOnce(&InputHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or an input of a request the backend holds.
        f(unsafe { arg(input, "input") }?)
    })
}

with_host_policy_twin! {
    /// `TRITONBACKEND_InputProperties`: each out-argument may be null.
    fn TRITONBACKEND_InputProperties, TRITONBACKEND_InputPropertiesForHostPolicy(
        input: *mut InputHandle,
        [_host_policy_name: *const c_char],
        name: *mut *const c_char,
        datatype: *mut u32,
        shape: *mut *const i64,
        dims_count: *mut u32,
        byte_size: *mut u64,
        buffer_count: *mut u32,
    ) {
        with(input, |i| {
            // SAFETY: each out-argument is null or valid for a write.
            unsafe {
                put(name, i.name.as_ptr());
                put(datatype, data_type_code(i.dtype));
                put(shape, i.shape.as_ptr());
                put(dims_count, i.shape.len() as u32);
                put(byte_size, i.data.len() as u64);
                put(buffer_count, 1);
            }
            Ok(())
        })
    }
}

/// The input's buffer `index` (only 0 exists).
fn check_index(input: &InputHandle, index: u32) -> oxiserve_types::Result<()> {
    if index == 0 {
        return Ok(());
    }
    Err(Error::invalid_arg(format!(
        "input '{}' has 1 buffer; index {index} is out of bounds",
        input.name.to_string_lossy()
    )))
}

with_host_policy_twin! {
    /// `TRITONBACKEND_InputBuffer`: the input's bytes in CPU memory, whatever
    /// memory type was preferred.
    fn TRITONBACKEND_InputBuffer, TRITONBACKEND_InputBufferForHostPolicy(
        input: *mut InputHandle,
        [_host_policy_name: *const c_char],
        index: u32,
        buffer: *mut *const c_void,
        buffer_byte_size: *mut u64,
        memory_type: *mut u32,
        memory_type_id: *mut i64,
    ) {
        with(input, |i| {
            check_index(i, index)?;
            // SAFETY: out-arguments, null refused.
            unsafe {
                write(buffer, "buffer", i.data.as_ptr().cast())?;
                write(buffer_byte_size, "buffer_byte_size", i.data.len() as u64)?;
                write(memory_type, "memory_type", MEMORY_CPU)?;
                write(memory_type_id, "memory_type_id", 0)
            }
        })
    }
}

/// `TRITONBACKEND_InputBufferAttributes`: owned by the input.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_InputBufferAttributes(
    input: *mut InputHandle,
    index: u32,
    buffer: *mut *const c_void,
    buffer_attributes: *mut *const BufferAttributesHandle,
) -> *mut ErrorHandle {
    with(input, |i| {
        check_index(i, index)?;
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(buffer, "buffer", i.data.as_ptr().cast())?;
            write(
                buffer_attributes,
                "buffer_attributes",
                &raw const i.attributes,
            )
        }
    })
}
