//! `TRITONBACKEND_State*`: new values of a sequence's implicit states.

use std::{ffi::c_char, ffi::c_void, sync::Arc};

use oxiserve_types::Error;

use super::output::{hand_out, zeroed};
use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, shape_arg, status, write},
    ffi::{data_type, null_argument, str_of},
    request::RequestHandle,
    state::StateHandle,
};

/// `TRITONBACKEND_StateNew`: a state of `request`, owned by the request.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_StateNew(
    state: *mut *mut StateHandle,
    request: *mut RequestHandle,
    name: *const c_char,
    datatype: u32,
    shape: *const i64,
    dims_count: u32,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a request the backend holds.
        let request = unsafe { arg(request, "request") }?;
        // SAFETY: null or a C string.
        let name = unsafe { str_of(name) }.ok_or_else(|| null_argument("name"))?;
        let model = &request.sink.model;
        if model.states.is_empty() {
            return Err(Error::invalid_arg(format!(
                "unable to add state '{name}'. State configuration is missing for model '{}'.",
                model.name
            )));
        }
        let declared = model
            .states
            .iter()
            .find(|s| s.output_name == name)
            .ok_or_else(|| {
                Error::invalid_arg(format!(
                    "state '{name}' is not a valid state name for model '{}'",
                    model.name
                ))
            })?;
        let dtype = data_type(datatype)
            .filter(|d| declared.dtype.is_none_or(|declared| declared == *d))
            .ok_or_else(|| {
                Error::invalid_arg(format!("state '{name}' has the wrong data type {datatype}"))
            })?;
        // SAFETY: the caller gives `dims_count` dimensions at `shape`.
        let shape = unsafe { shape_arg(shape, dims_count as usize) }?;
        let mut handle = Box::new(StateHandle {
            name: name.to_string(),
            dtype,
            shape,
            buffer: Vec::new(),
            attributes: BufferAttributesHandle::cpu(0),
            sink: Arc::clone(&request.sink),
        });
        let pointer: *mut StateHandle = &mut *handle;
        request.states.lock().push(handle);
        // SAFETY: an out-argument, null refused; the state lives in its
        // request until the request is released.
        unsafe { write(state, "state", pointer) }
    })
}

/// `TRITONBACKEND_StateUpdate`: the state's value goes with the request's
/// next response, and from there to the sequence's next request.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_StateUpdate(state: *mut StateHandle) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a state of a request the backend holds.
        let state = unsafe { arg(state, "state") }?;
        state.sink.update_state(state.tensor());
        Ok(())
    })
}

/// `TRITONBACKEND_StateBuffer`: the state's buffer of `buffer_byte_size`
/// bytes of CPU memory (the one it has when the size is the same).
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_StateBuffer(
    state: *mut StateHandle,
    buffer: *mut *mut c_void,
    buffer_byte_size: u64,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a state of a request the backend holds, used by
        // the thread that made it.
        let state = unsafe { state.as_mut() }.ok_or_else(|| null_argument("state"))?;
        if state.buffer.len() as u64 != buffer_byte_size {
            state.buffer = zeroed(buffer_byte_size, "state")?;
        }
        state.attributes.set_byte_size(state.buffer.len());
        // SAFETY: out-arguments, null refused.
        unsafe { hand_out(&mut state.buffer, buffer, memory_type, memory_type_id) }
    })
}

/// `TRITONBACKEND_StateBufferAttributes`: owned by the state.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_StateBufferAttributes(
    state: *mut StateHandle,
    buffer_attributes: *mut *const BufferAttributesHandle,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a live state.
        let state = unsafe { arg(state, "state") }?;
        // SAFETY: an out-argument, null refused.
        unsafe {
            write(
                buffer_attributes,
                "buffer_attributes",
                &raw const state.attributes,
            )
        }
    })
}
