//! `TRITONBACKEND_ModelInstanceInitialize` / `Finalize`: an instance of the
//! loaded model, created on the thread the host calls from (the host runs
//! each instance on its own thread, as the backend contract expects), kept
//! as the host instance's state.

use std::ffi::c_char;

use oxiserve_backend::{InstanceContext, InstanceKind, ModelInstance};
use oxiserve_types::{Error, Result};

use crate::abi::{self, TRITONBACKEND_ModelInstance, instance_kind};
use crate::model;
use crate::status::{check, text};

/// What an instance handle's state holds.
pub(crate) struct InstanceState {
    pub instance: Box<dyn ModelInstance>,
    pub model_name: String,
    pub model_version: i64,
}

/// Creates the instance the host describes and keeps it as its state.
pub(crate) fn initialize(handle: *mut TRITONBACKEND_ModelInstance) -> Result<()> {
    let mut name: *const c_char = std::ptr::null();
    let mut kind = 0u32;
    let mut device_id = 0i32;
    let mut model = std::ptr::null_mut();
    // SAFETY: `handle` is the live instance of this call; each function
    // writes its out-parameter (the name lives as long as the instance).
    unsafe {
        check(abi::TRITONBACKEND_ModelInstanceName(handle, &mut name))?;
        check(abi::TRITONBACKEND_ModelInstanceKind(handle, &mut kind))?;
        check(abi::TRITONBACKEND_ModelInstanceDeviceId(
            handle,
            &mut device_id,
        ))?;
        check(abi::TRITONBACKEND_ModelInstanceModel(handle, &mut model))?;
    }
    let model = model::state(model)?;
    let context = InstanceContext {
        name: text(name),
        kind: match kind {
            instance_kind::GPU => InstanceKind::Gpu,
            instance_kind::MODEL => InstanceKind::Model,
            _ => InstanceKind::Cpu,
        },
        device_id,
    };
    let state = Box::into_raw(Box::new(InstanceState {
        instance: model.model.create_instance(&context)?,
        model_name: model.name.clone(),
        model_version: model.version,
    }));
    // SAFETY: the state is ours until finalize takes it back.
    let set = check(unsafe { abi::TRITONBACKEND_ModelInstanceSetState(handle, state.cast()) });
    if set.is_err() {
        // SAFETY: the host refused it, so we still own the box.
        drop(unsafe { Box::from_raw(state) });
    }
    set
}

/// Drops the instance kept by [`initialize`].
pub(crate) fn finalize(handle: *mut TRITONBACKEND_ModelInstance) -> Result<()> {
    let state = state_ptr(handle)?;
    if !state.is_null() {
        // SAFETY: the box `initialize` leaked, taken back once: the host
        // finalizes an instance once, after its last execute returned.
        drop(unsafe { Box::from_raw(state) });
    }
    Ok(())
}

/// The instance state of `handle`, for the execute call that has it.
pub(crate) fn state<'a>(handle: *mut TRITONBACKEND_ModelInstance) -> Result<&'a mut InstanceState> {
    let state = state_ptr(handle)?;
    // SAFETY: set by `initialize`, alive until `finalize`; the host runs one
    // execute of an instance at a time, so this borrow is the only one.
    unsafe { state.as_mut() }.ok_or_else(|| Error::internal("the model instance has no state"))
}

fn state_ptr(handle: *mut TRITONBACKEND_ModelInstance) -> Result<*mut InstanceState> {
    let mut state = std::ptr::null_mut();
    // SAFETY: `handle` is a live instance; the host writes one pointer.
    check(unsafe { abi::TRITONBACKEND_ModelInstanceState(handle, &mut state) })?;
    Ok(state.cast())
}
