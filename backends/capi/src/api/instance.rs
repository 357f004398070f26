//! `TRITONBACKEND_ModelInstance*`: an instance's properties and state.

use std::{
    ffi::{c_char, c_void},
    sync::atomic::Ordering,
};

use oxiserve_types::Error;

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, status, write},
    instance::InstanceHandle,
    message::MessageHandle,
    model::ModelHandle,
};

/// Runs `f` on the instance `instance` points to.
pub(super) fn with(
    instance: *mut InstanceHandle,
    f: impl FnOnce(&InstanceHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or an instance this server handed the library, alive
        // until its TRITONBACKEND_ModelInstanceFinalize returns.
        f(unsafe { arg(instance, "instance") }?)
    })
}

/// Triton's error for an index past `count` things of `what`.
fn out_of_bounds(index: u32, count: usize, what: &str) -> Error {
    Error::invalid_arg(format!(
        "out of bounds index {index}: instance is configured with {count} {what}"
    ))
}

/// `TRITONBACKEND_ModelInstanceName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceName(
    instance: *mut InstanceHandle,
    name: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(name, "name", i.name.as_ptr())
    })
}

/// `TRITONBACKEND_ModelInstanceKind`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceKind(
    instance: *mut InstanceHandle,
    kind: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe { write(kind, "kind", i.kind) })
}

/// `TRITONBACKEND_ModelInstanceDeviceId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceDeviceId(
    instance: *mut InstanceHandle,
    device_id: *mut i32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(device_id, "device_id", i.device_id)
    })
}

/// `TRITONBACKEND_ModelInstanceHostPolicy`: owned by the instance.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceHostPolicy(
    instance: *mut InstanceHandle,
    host_policy: *mut *const MessageHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(host_policy, "host_policy", &raw const i.host_policy)
    })
}

/// `TRITONBACKEND_ModelInstanceIsPassive`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceIsPassive(
    instance: *mut InstanceHandle,
    is_passive: *mut bool,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(is_passive, "is_passive", i.passive)
    })
}

/// `TRITONBACKEND_ModelInstanceProfileCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceProfileCount(
    instance: *mut InstanceHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(count, "count", i.profiles.len() as u32)
    })
}

/// `TRITONBACKEND_ModelInstanceProfileName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceProfileName(
    instance: *mut InstanceHandle,
    index: u32,
    profile_name: *mut *const c_char,
) -> *mut ErrorHandle {
    with(instance, |i| {
        let profile = i
            .profiles
            .get(index as usize)
            .ok_or_else(|| out_of_bounds(index, i.profiles.len(), "profiles"))?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(profile_name, "profile_name", profile.as_ptr()) }
    })
}

/// `TRITONBACKEND_ModelInstanceSecondaryDeviceCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceSecondaryDeviceCount(
    instance: *mut InstanceHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(count, "count", i.secondary_devices.len() as u32)
    })
}

/// `TRITONBACKEND_ModelInstanceSecondaryDeviceProperties`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    instance: *mut InstanceHandle,
    index: u32,
    kind: *mut *const c_char,
    id: *mut i64,
) -> *mut ErrorHandle {
    with(instance, |i| {
        let (device_kind, device_id) = i
            .secondary_devices
            .get(index as usize)
            .ok_or_else(|| out_of_bounds(index, i.secondary_devices.len(), "secondary devices"))?;
        // SAFETY: out-arguments, null refused.
        unsafe { write(kind, "kind", device_kind.as_ptr())? };
        // SAFETY: as above.
        unsafe { write(id, "id", *device_id) }
    })
}

/// `TRITONBACKEND_ModelInstanceModel`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceModel(
    instance: *mut InstanceHandle,
    model: *mut *const ModelHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(model, "model", std::sync::Arc::as_ptr(&i.model))
    })
}

/// `TRITONBACKEND_ModelInstanceState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceState(
    instance: *mut InstanceHandle,
    state: *mut *mut c_void,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(instance, |i| unsafe {
        write(state, "state", i.state.load(Ordering::Acquire))
    })
}

/// `TRITONBACKEND_ModelInstanceSetState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceSetState(
    instance: *mut InstanceHandle,
    state: *mut c_void,
) -> *mut ErrorHandle {
    with(instance, |i| {
        i.state.store(state, Ordering::Release);
        Ok(())
    })
}

/// `TRITONBACKEND_ModelInstanceReportMemoryUsage`: accepted; this server
/// does not report instance memory.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelInstanceReportMemoryUsage(
    instance: *mut InstanceHandle,
    _usage: *mut *mut BufferAttributesHandle,
    _usage_size: u32,
) -> *mut ErrorHandle {
    with(instance, |_| Ok(()))
}
