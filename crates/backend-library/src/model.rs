//! `TRITONBACKEND_ModelInitialize` / `ModelFinalize`: the host's model
//! becomes a [`ModelContext`], loaded by the backend; the loaded [`Model`]
//! is the host model's state until it is finalized.

use std::{ffi::c_char, path::PathBuf, sync::Arc};

use oxiserve_backend::{Backend, Model, ModelContext, NoHost};
use oxiserve_proto::ModelConfig;
use oxiserve_types::{Error, Result};

use crate::abi::{self, TRITONBACKEND_Model, TRITONSERVER_Message};
use crate::status::{check, text};

/// What a model handle's state holds.
pub(crate) struct ModelState {
    pub model: Arc<dyn Model>,
    pub name: String,
    pub version: i64,
}

/// Loads the model the host describes and keeps it as the handle's state.
pub(crate) fn initialize(backend: &dyn Backend, handle: *mut TRITONBACKEND_Model) -> Result<()> {
    let context = context(handle)?;
    let model = backend.load(&context)?;
    let state = Box::new(ModelState {
        model,
        name: context.name,
        version: context.version,
    });
    let state = Box::into_raw(state);
    // SAFETY: `handle` is the live model the host passed in; the state is
    // ours until finalize takes it back.
    let set = check(unsafe { abi::TRITONBACKEND_ModelSetState(handle, state.cast()) });
    if set.is_err() {
        // SAFETY: the host refused it, so we still own the box.
        drop(unsafe { Box::from_raw(state) });
    }
    set
}

/// Drops the model kept by [`initialize`].
pub(crate) fn finalize(handle: *mut TRITONBACKEND_Model) -> Result<()> {
    let state = state_ptr(handle)?;
    if !state.is_null() {
        // SAFETY: the state is the box `initialize` leaked, taken back once:
        // the host finalizes a model once, after its instances.
        drop(unsafe { Box::from_raw(state) });
    }
    Ok(())
}

/// The model state of `handle`, borrowed for the call that has the handle.
pub(crate) fn state<'a>(handle: *mut TRITONBACKEND_Model) -> Result<&'a ModelState> {
    let state = state_ptr(handle)?;
    // SAFETY: set by `initialize` and alive until `finalize`, which the host
    // calls only after every instance of the model is finalized.
    unsafe { state.as_ref() }.ok_or_else(|| Error::internal("the model has no state"))
}

fn state_ptr(handle: *mut TRITONBACKEND_Model) -> Result<*mut ModelState> {
    let mut state = std::ptr::null_mut();
    // SAFETY: `handle` is a live model; the host writes one pointer.
    check(unsafe { abi::TRITONBACKEND_ModelState(handle, &mut state) })?;
    Ok(state.cast())
}

fn context(handle: *mut TRITONBACKEND_Model) -> Result<ModelContext> {
    let mut name: *const c_char = std::ptr::null();
    let mut version = 0u64;
    let mut artifact = 0u32;
    let mut location: *const c_char = std::ptr::null();
    // SAFETY: `handle` is the live model of this call; each function writes
    // its out-parameters, whose strings live as long as the model.
    unsafe {
        check(abi::TRITONBACKEND_ModelName(handle, &mut name))?;
        check(abi::TRITONBACKEND_ModelVersion(handle, &mut version))?;
        check(abi::TRITONBACKEND_ModelRepository(
            handle,
            &mut artifact,
            &mut location,
        ))?;
    }
    let name = text(name);
    let model_path = PathBuf::from(text(location));
    let config = config(handle)?;
    Ok(ModelContext {
        version_path: model_path.join(version.to_string()),
        version: i64::try_from(version).unwrap_or(i64::MAX),
        name,
        config: Arc::new(config),
        model_path,
        host: Arc::new(NoHost),
    })
}

/// The model's configuration, from the host's JSON of it.
fn config(handle: *mut TRITONBACKEND_Model) -> Result<ModelConfig> {
    let mut message: *mut TRITONSERVER_Message = std::ptr::null_mut();
    // SAFETY: `handle` is live; the host hands us a message we delete below.
    check(unsafe { abi::TRITONBACKEND_ModelConfig(handle, 1, &mut message) })?;
    let mut base: *const c_char = std::ptr::null();
    let mut size = 0usize;
    // SAFETY: `message` is the live message just made; its bytes are valid
    // until it is deleted, and we copy them before that.
    let json = unsafe {
        let read = check(abi::TRITONSERVER_MessageSerializeToJson(
            message, &mut base, &mut size,
        ));
        let json = read.map(|()| {
            if base.is_null() {
                String::new()
            } else {
                let bytes = std::slice::from_raw_parts(base.cast::<u8>(), size);
                String::from_utf8_lossy(bytes).into_owned()
            }
        });
        check(abi::TRITONSERVER_MessageDelete(message))?;
        json?
    };
    oxiserve_config::from_json(&json).map_err(Error::internal)
}
