//! `TRITONSERVER_BufferAttributes`: where a buffer lies and how big it is.
//! Backends may set the attributes of objects others own (an input's), so
//! the fields change through shared references.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicUsize, Ordering::Relaxed};

use crate::ffi::MEMORY_CPU;

/// The object behind a `TRITONSERVER_BufferAttributes*`.
#[derive(Debug, Default)]
pub struct BufferAttributesHandle {
    byte_size: AtomicUsize,
    memory_type: AtomicU32,
    memory_type_id: AtomicI64,
    /// The CUDA IPC handle's address, kept for backends that set one; this
    /// server never reads it.
    cuda_ipc_handle: AtomicUsize,
}

impl BufferAttributesHandle {
    /// Attributes of `byte_size` bytes of CPU memory.
    pub fn cpu(byte_size: usize) -> Self {
        let attributes = Self::default();
        attributes.set_byte_size(byte_size);
        attributes.set_memory_type(MEMORY_CPU);
        attributes
    }

    pub fn byte_size(&self) -> usize {
        self.byte_size.load(Relaxed)
    }

    pub fn set_byte_size(&self, size: usize) {
        self.byte_size.store(size, Relaxed);
    }

    pub fn memory_type(&self) -> u32 {
        self.memory_type.load(Relaxed)
    }

    pub fn set_memory_type(&self, memory_type: u32) {
        self.memory_type.store(memory_type, Relaxed);
    }

    pub fn memory_type_id(&self) -> i64 {
        self.memory_type_id.load(Relaxed)
    }

    pub fn set_memory_type_id(&self, id: i64) {
        self.memory_type_id.store(id, Relaxed);
    }

    pub fn cuda_ipc_handle(&self) -> usize {
        self.cuda_ipc_handle.load(Relaxed)
    }

    pub fn set_cuda_ipc_handle(&self, handle: usize) {
        self.cuda_ipc_handle.store(handle, Relaxed);
    }
}
