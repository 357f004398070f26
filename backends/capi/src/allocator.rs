//! `TRITONSERVER_ResponseAllocator`: how the caller of an in-process
//! request (a backend's BLS call) wants the outputs of its responses
//! allocated and released.

use std::ffi::{c_char, c_void};

use crate::{buffer::BufferAttributesHandle, error::ErrorHandle};

/// `TRITONSERVER_ResponseAllocatorAllocFn_t`.
pub type AllocFn = unsafe extern "C" fn(
    allocator: *mut AllocatorHandle,
    tensor_name: *const c_char,
    byte_size: usize,
    memory_type: u32,
    memory_type_id: i64,
    userp: *mut c_void,
    buffer: *mut *mut c_void,
    buffer_userp: *mut *mut c_void,
    actual_memory_type: *mut u32,
    actual_memory_type_id: *mut i64,
) -> *mut ErrorHandle;

/// `TRITONSERVER_ResponseAllocatorReleaseFn_t`.
pub type ReleaseFn = unsafe extern "C" fn(
    allocator: *mut AllocatorHandle,
    buffer: *mut c_void,
    buffer_userp: *mut c_void,
    byte_size: usize,
    memory_type: u32,
    memory_type_id: i64,
) -> *mut ErrorHandle;

/// `TRITONSERVER_ResponseAllocatorStartFn_t`.
pub type StartFn =
    unsafe extern "C" fn(allocator: *mut AllocatorHandle, userp: *mut c_void) -> *mut ErrorHandle;

/// `TRITONSERVER_ResponseAllocatorQueryFn_t`.
pub type QueryFn = unsafe extern "C" fn(
    allocator: *mut AllocatorHandle,
    userp: *mut c_void,
    tensor_name: *const c_char,
    byte_size: *mut usize,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
) -> *mut ErrorHandle;

/// `TRITONSERVER_ResponseAllocatorBufferAttributesFn_t`.
pub type BufferAttributesFn = unsafe extern "C" fn(
    allocator: *mut AllocatorHandle,
    tensor_name: *const c_char,
    buffer_attributes: *mut BufferAttributesHandle,
    userp: *mut c_void,
    buffer_userp: *mut c_void,
) -> *mut ErrorHandle;

/// The object behind a `TRITONSERVER_ResponseAllocator*`. The query and
/// buffer-attributes functions are kept but not called: outputs are
/// allocated once their size is known, in CPU memory.
#[derive(Debug, Clone, Copy)]
pub struct AllocatorHandle {
    pub alloc: AllocFn,
    pub release: ReleaseFn,
    pub start: Option<StartFn>,
    pub query: Option<QueryFn>,
    pub buffer_attributes: Option<BufferAttributesFn>,
}
