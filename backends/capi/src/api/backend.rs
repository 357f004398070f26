//! `TRITONBACKEND_Backend*` and `TRITONBACKEND_BackendAttribute*`.

use std::{
    ffi::{c_char, c_void},
    sync::atomic::Ordering,
};

use crate::{
    api::memory::{MEMORY_MANAGER, MemoryManagerHandle},
    error::{ErrorHandle, arg, status, write},
    library::{BackendAttributeHandle, BackendHandle, PreferredGroup},
    message::MessageHandle,
};

/// `TRITONBACKEND_ARTIFACT_FILESYSTEM`.
const ARTIFACT_FILESYSTEM: u32 = 0;

/// Runs `f` on the backend `backend` points to.
fn with(
    backend: *mut BackendHandle,
    f: impl FnOnce(&BackendHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or the backend this server handed the library, which
        // lives while any of its models does.
        f(unsafe { arg(backend, "backend") }?)
    })
}

/// `TRITONBACKEND_BackendName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendName(
    backend: *mut BackendHandle,
    name: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(backend, |b| unsafe { write(name, "name", b.name.as_ptr()) })
}

/// `TRITONBACKEND_BackendConfig`: `{"cmdline": {...}}`, owned by the backend object.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendConfig(
    backend: *mut BackendHandle,
    backend_config: *mut *const MessageHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(backend, |b| unsafe {
        write(backend_config, "backend_config", &raw const b.config)
    })
}

/// `TRITONBACKEND_BackendExecutionPolicy`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendExecutionPolicy(
    backend: *mut BackendHandle,
    policy: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(backend, |b| unsafe {
        write(policy, "policy", b.execution_policy.load(Ordering::Relaxed))
    })
}

/// `TRITONBACKEND_BackendSetExecutionPolicy`: kept; every instance runs on
/// its own thread whatever the policy.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendSetExecutionPolicy(
    backend: *mut BackendHandle,
    policy: u32,
) -> *mut ErrorHandle {
    with(backend, |b| {
        b.execution_policy.store(policy, Ordering::Relaxed);
        Ok(())
    })
}

/// `TRITONBACKEND_BackendArtifacts`: the library's folder.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendArtifacts(
    backend: *mut BackendHandle,
    artifact_type: *mut u32,
    location: *mut *const c_char,
) -> *mut ErrorHandle {
    with(backend, |b| {
        // SAFETY: out-arguments, null refused.
        unsafe { write(artifact_type, "artifact_type", ARTIFACT_FILESYSTEM)? };
        // SAFETY: as above.
        unsafe { write(location, "location", b.directory.as_ptr()) }
    })
}

/// `TRITONBACKEND_BackendMemoryManager`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendMemoryManager(
    backend: *mut BackendHandle,
    manager: *mut *mut MemoryManagerHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused; the manager is a static that
    // backends only pass back.
    with(backend, |_| unsafe {
        write(manager, "manager", (&raw const MEMORY_MANAGER).cast_mut())
    })
}

/// `TRITONBACKEND_BackendState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendState(
    backend: *mut BackendHandle,
    state: *mut *mut c_void,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(backend, |b| unsafe {
        write(state, "state", b.state.load(Ordering::Acquire))
    })
}

/// `TRITONBACKEND_BackendSetState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendSetState(
    backend: *mut BackendHandle,
    state: *mut c_void,
) -> *mut ErrorHandle {
    with(backend, |b| {
        b.state.store(state, Ordering::Release);
        Ok(())
    })
}

/// `TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    backend_attributes: *mut BackendAttributeHandle,
    kind: u32,
    count: u64,
    device_ids: *const u64,
    id_count: u64,
) -> *mut ErrorHandle {
    status(|| {
        if backend_attributes.is_null() {
            return Err(crate::ffi::null_argument("backend_attributes"));
        }
        let device_ids = if device_ids.is_null() {
            Vec::new()
        } else {
            // SAFETY: the caller gives `id_count` ids at `device_ids`.
            unsafe { std::slice::from_raw_parts(device_ids, id_count as usize) }.to_vec()
        };
        // SAFETY: the attribute object this server passed to
        // TRITONBACKEND_GetBackendAttribute, which it alone uses during the call.
        let attributes = unsafe { &mut *backend_attributes };
        attributes.preferred_groups.push(PreferredGroup {
            kind,
            count,
            device_ids,
        });
        Ok(())
    })
}

/// `TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading(
    backend_attributes: *mut BackendAttributeHandle,
    enabled: bool,
) -> *mut ErrorHandle {
    status(|| {
        if backend_attributes.is_null() {
            return Err(crate::ffi::null_argument("backend_attributes"));
        }
        // SAFETY: as in TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup.
        unsafe { (*backend_attributes).parallel_instance_loading = enabled };
        Ok(())
    })
}
