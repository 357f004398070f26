//! `TRITONSERVER_InferenceRequest*` of an in-process request's tensors:
//! its inputs (their data copied when appended) and requested outputs.

use std::ffi::{c_char, c_void};

use oxiserve_types::{Error, ErrorKind, Result};

use super::inference_request::{text, with};
use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, shape_arg},
    ffi::{MEMORY_GPU, data_type, null_argument},
    inference_request::{InferenceRequestHandle, InputData},
};

/// Runs `f` on the request and the tensor name `name` points to.
fn with_name(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
    f: impl FnOnce(&mut InferenceRequestHandle, &str) -> Result<()>,
) -> *mut ErrorHandle {
    with(inference_request, |r| f(r, text(name, "name")?))
}

/// `TRITONSERVER_InferenceRequestAddInput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestAddInput(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
    datatype: u32,
    shape: *const i64,
    dim_count: u64,
) -> *mut ErrorHandle {
    with_name(inference_request, name, |r, name| {
        if r.inputs.iter().any(|i| i.name == name) {
            return Err(Error::invalid_arg(format!(
                "{}input '{name}' already exists in request",
                r.log_request()
            )));
        }
        let dtype = data_type(datatype)
            .ok_or_else(|| Error::invalid_arg(format!("input '{name}' has no valid datatype")))?;
        // SAFETY: the caller gives `dim_count` dimensions at `shape`.
        let shape = unsafe { shape_arg(shape, dim_count as usize) }?;
        r.inputs.push(InputData {
            name: name.to_string(),
            dtype,
            shape,
            data: Vec::new(),
        });
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestAddRawInput`: the model's only input,
/// as raw bytes; not supported here.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestAddRawInput(
    inference_request: *mut InferenceRequestHandle,
    _name: *const c_char,
) -> *mut ErrorHandle {
    with(inference_request, |_| {
        Err(Error::new(
            ErrorKind::Unsupported,
            "raw inputs are not supported by this server's C API",
        ))
    })
}

/// `TRITONSERVER_InferenceRequestRemoveInput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestRemoveInput(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
) -> *mut ErrorHandle {
    with_name(inference_request, name, |r, name| {
        r.input_mut(name)?;
        r.inputs.retain(|i| i.name != name);
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestRemoveAllInputs`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestRemoveAllInputs(
    inference_request: *mut InferenceRequestHandle,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.inputs.clear();
        Ok(())
    })
}

/// Appends `byte_size` bytes at `base` to input `name`'s data.
fn append(
    request: &mut InferenceRequestHandle,
    name: *const c_char,
    base: *const c_void,
    byte_size: usize,
    memory_type: u32,
) -> Result<()> {
    let name = text(name, "name")?;
    if memory_type == MEMORY_GPU {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("input '{name}': GPU memory is not supported: this server has no CUDA"),
        ));
    }
    let input = request.input_mut(name)?;
    if byte_size > 0 {
        if base.is_null() {
            return Err(null_argument("base"));
        }
        // SAFETY: the caller gives `byte_size` readable bytes at `base`.
        let bytes = unsafe { std::slice::from_raw_parts(base.cast::<u8>(), byte_size) };
        input.data.extend_from_slice(bytes);
    }
    Ok(())
}

with_host_policy_twin! {
    /// `TRITONSERVER_InferenceRequestAppendInputData`: the bytes are copied.
    fn TRITONSERVER_InferenceRequestAppendInputData,
        TRITONSERVER_InferenceRequestAppendInputDataWithHostPolicy(
        inference_request: *mut InferenceRequestHandle,
        name: *const c_char,
        base: *const c_void,
        byte_size: usize,
        memory_type: u32,
        _memory_type_id: i64,
        [_host_policy_name: *const c_char],
    ) {
        with(inference_request, |r| {
            append(r, name, base, byte_size, memory_type)
        })
    }
}

/// `TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
    base: *const c_void,
    buffer_attributes: *mut BufferAttributesHandle,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        // SAFETY: null or live attributes.
        let attributes = unsafe { arg(buffer_attributes, "buffer_attributes") }?;
        append(
            r,
            name,
            base,
            attributes.byte_size(),
            attributes.memory_type(),
        )
    })
}

/// `TRITONSERVER_InferenceRequestRemoveAllInputData`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestRemoveAllInputData(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
) -> *mut ErrorHandle {
    with_name(inference_request, name, |r, name| {
        r.input_mut(name)?.data.clear();
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestAddRequestedOutput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestAddRequestedOutput(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
) -> *mut ErrorHandle {
    with_name(inference_request, name, |r, name| {
        if !r.outputs.iter().any(|o| o == name) {
            r.outputs.push(name.to_string());
        }
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestRemoveRequestedOutput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestRemoveRequestedOutput(
    inference_request: *mut InferenceRequestHandle,
    name: *const c_char,
) -> *mut ErrorHandle {
    with_name(inference_request, name, |r, name| {
        if !r.outputs.iter().any(|o| o == name) {
            return Err(Error::invalid_arg(format!(
                "{}output '{name}' does not exist in request",
                r.log_request()
            )));
        }
        r.outputs.retain(|o| o != name);
        Ok(())
    })
}

/// `TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
    inference_request: *mut InferenceRequestHandle,
) -> *mut ErrorHandle {
    with(inference_request, |r| {
        r.outputs.clear();
        Ok(())
    })
}
