//! `TRITONBACKEND_MemoryManager*`: CPU memory (pinned memory is plain CPU
//! memory here); GPU memory is refused, as this server has no CUDA.

use std::ffi::c_void;

use oxiserve_types::{Error, ErrorKind};

use crate::{
    error::{ErrorHandle, status, write},
    ffi::{MEMORY_CPU, MEMORY_CPU_PINNED, MEMORY_GPU},
};

/// The object behind `TRITONBACKEND_MemoryManager*`: one for the process.
#[derive(Debug)]
pub struct MemoryManagerHandle;

/// The memory manager every backend gets.
pub static MEMORY_MANAGER: MemoryManagerHandle = MemoryManagerHandle;

/// `TRITONBACKEND_MemoryManagerAllocate`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_MemoryManagerAllocate(
    _manager: *mut MemoryManagerHandle,
    buffer: *mut *mut c_void,
    memory_type: u32,
    _memory_type_id: i64,
    byte_size: u64,
) -> *mut ErrorHandle {
    status(|| {
        if buffer.is_null() {
            return Err(crate::ffi::null_argument("buffer"));
        }
        match memory_type {
            MEMORY_CPU | MEMORY_CPU_PINNED => {}
            MEMORY_GPU => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    "GPU memory allocation not supported: this server has no CUDA",
                ));
            }
            other => {
                return Err(Error::invalid_arg(format!("unknown memory type {other}")));
            }
        }
        let size = usize::try_from(byte_size)
            .map_err(|_| Error::unavailable("CPU memory allocation failed"))?;
        // SAFETY: malloc takes any size; a null result is handled below.
        let allocated = unsafe { libc::malloc(size.max(1)) };
        if allocated.is_null() {
            return Err(Error::unavailable("CPU memory allocation failed"));
        }
        // SAFETY: non-null out-argument.
        unsafe { write(buffer, "buffer", allocated) }
    })
}

/// `TRITONBACKEND_MemoryManagerFree`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_MemoryManagerFree(
    _manager: *mut MemoryManagerHandle,
    buffer: *mut c_void,
    memory_type: u32,
    _memory_type_id: i64,
) -> *mut ErrorHandle {
    status(|| {
        if matches!(memory_type, MEMORY_CPU | MEMORY_CPU_PINNED) {
            // SAFETY: memory TRITONBACKEND_MemoryManagerAllocate gave (malloc),
            // or null, which free ignores.
            unsafe { libc::free(buffer) };
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use super::*;
    use crate::api::errors::TRITONSERVER_ErrorDelete;

    #[test]
    fn cpu_memory_is_allocated_and_freed() {
        let mut buffer = ptr::null_mut();
        let manager = (&raw const MEMORY_MANAGER).cast_mut();
        for memory_type in [MEMORY_CPU, MEMORY_CPU_PINNED] {
            let error =
                TRITONBACKEND_MemoryManagerAllocate(manager, &mut buffer, memory_type, 0, 64);
            assert!(error.is_null() && !buffer.is_null());
            // SAFETY: 64 writable bytes were just allocated.
            unsafe { buffer.cast::<u8>().write_bytes(1, 64) };
            assert!(TRITONBACKEND_MemoryManagerFree(manager, buffer, memory_type, 0).is_null());
        }
    }

    #[test]
    fn gpu_memory_is_refused() {
        let mut buffer = ptr::null_mut();
        let manager = (&raw const MEMORY_MANAGER).cast_mut();
        let error = TRITONBACKEND_MemoryManagerAllocate(manager, &mut buffer, MEMORY_GPU, 0, 64);
        assert!(!error.is_null());
        // SAFETY: a live error.
        let message = unsafe { &(*error).message };
        assert!(
            message
                .to_str()
                .unwrap()
                .contains("this server has no CUDA")
        );
        TRITONSERVER_ErrorDelete(error);
    }
}
