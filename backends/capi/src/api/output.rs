//! `TRITONBACKEND_Output*`: an output's buffer, allocated in CPU memory
//! whatever memory type was preferred (the actual type is returned, as
//! Triton's allocators may), and sent without a copy.

use std::ffi::c_void;

use oxiserve_types::{Error, ErrorKind};

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, status, write},
    ffi::{MEMORY_CPU, null_argument},
    response::OutputHandle,
};

/// `TRITONBACKEND_OutputBuffer`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_OutputBuffer(
    output: *mut OutputHandle,
    buffer: *mut *mut c_void,
    buffer_byte_size: u64,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or an output of a response the backend holds; only
        // the backend's thread using that response touches it.
        let output = unsafe { output.as_mut() }.ok_or_else(|| null_argument("output"))?;
        if output.buffer.is_some() {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "allocated buffer for output '{}' already exists",
                    output.name.to_string_lossy()
                ),
            ));
        }
        let size = usize::try_from(buffer_byte_size)
            .map_err(|_| Error::unavailable("output buffer is too large"))?;
        let data = output.buffer.insert(vec![0; size]);
        output.attributes.set_byte_size(size);
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(memory_type, "memory_type", MEMORY_CPU)?;
            write(memory_type_id, "memory_type_id", 0)?;
            write(buffer, "buffer", data.as_mut_ptr().cast())
        }
    })
}

/// `TRITONBACKEND_OutputBufferAttributes`: owned by the output.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_OutputBufferAttributes(
    output: *mut OutputHandle,
    buffer_attributes: *mut *const BufferAttributesHandle,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live output.
        let output = unsafe { output.as_ref() }.ok_or_else(|| null_argument("output"))?;
        // SAFETY: an out-argument, null refused.
        unsafe {
            write(
                buffer_attributes,
                "buffer_attributes",
                &raw const output.attributes,
            )
        }
    })
}
