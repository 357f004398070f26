//! `TRITONBACKEND_Output*`: an output's buffer, allocated in CPU memory
//! whatever memory type was preferred (the actual type is returned, as
//! Triton's allocators may), and sent without a copy.

use std::{
    alloc::{Layout, alloc_zeroed},
    ffi::c_void,
};

use oxiserve_types::{Error, ErrorKind, Result};

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, status, write},
    ffi::{MEMORY_CPU, null_argument},
    response::OutputHandle,
};

/// Hands out `data`, a buffer in CPU memory (whatever memory type was
/// preferred), through the out-arguments of `TRITONBACKEND_OutputBuffer` or
/// `TRITONBACKEND_StateBuffer`.
///
/// # Safety
/// Each out-argument is null or valid for a write.
pub(super) unsafe fn hand_out(
    data: &mut [u8],
    buffer: *mut *mut c_void,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
) -> Result<()> {
    // SAFETY: the caller's promise; null refused.
    unsafe {
        write(memory_type, "memory_type", MEMORY_CPU)?;
        write(memory_type_id, "memory_type_id", 0)?;
        write(buffer, "buffer", data.as_mut_ptr().cast())
    }
}

/// A zeroed buffer of `byte_size` bytes for `what` (an output or a state),
/// from zeroed pages (as `vec![0; n]`); a size the process cannot allocate
/// is an error, not an abort.
pub(super) fn zeroed(byte_size: u64, what: &str) -> Result<Vec<u8>> {
    let too_large =
        || Error::unavailable(format!("{what} buffer of {byte_size} bytes is too large"));
    let size = usize::try_from(byte_size).map_err(|_| too_large())?;
    if size == 0 {
        return Ok(Vec::new());
    }
    let layout = Layout::array::<u8>(size).map_err(|_| too_large())?;
    // SAFETY: the layout's size is not zero.
    let data = unsafe { alloc_zeroed(layout) };
    if data.is_null() {
        return Err(too_large());
    }
    // SAFETY: allocated by the global allocator with the layout of `size`
    // bytes, every one of them initialized (zero).
    Ok(unsafe { Vec::from_raw_parts(data, size, size) })
}

/// Runs `f` on the output `output` points to.
fn with(
    output: *mut OutputHandle,
    f: impl FnOnce(&mut OutputHandle) -> Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or an output of a response the backend holds; only
        // the backend's thread using that response touches it.
        f(unsafe { output.as_mut() }.ok_or_else(|| null_argument("output"))?)
    })
}

/// `TRITONBACKEND_OutputBuffer`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_OutputBuffer(
    output: *mut OutputHandle,
    buffer: *mut *mut c_void,
    buffer_byte_size: u64,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
) -> *mut ErrorHandle {
    with(output, |output| {
        if output.buffer.is_some() {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "allocated buffer for output '{}' already exists",
                    output.name.to_string_lossy()
                ),
            ));
        }
        let data = output.buffer.insert(zeroed(buffer_byte_size, "output")?);
        output.attributes.set_byte_size(data.len());
        // SAFETY: out-arguments, null refused.
        unsafe { hand_out(data, buffer, memory_type, memory_type_id) }
    })
}

/// `TRITONBACKEND_OutputBufferAttributes`: owned by the output.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_OutputBufferAttributes(
    output: *mut OutputHandle,
    buffer_attributes: *mut *const BufferAttributesHandle,
) -> *mut ErrorHandle {
    with(output, |output| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_too_large_to_allocate_is_an_error() {
        assert_eq!(zeroed(3, "output").unwrap(), vec![0; 3]);
        assert!(zeroed(0, "output").unwrap().is_empty());
        let err = zeroed(u64::MAX, "output").unwrap_err();
        assert_eq!(
            err.message,
            format!("output buffer of {} bytes is too large", u64::MAX)
        );
        assert!(zeroed(1 << 62, "state").is_err());
    }
}
