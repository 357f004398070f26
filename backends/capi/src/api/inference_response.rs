//! `TRITONSERVER_InferenceResponse*`: reading a response to an in-process
//! request.

use std::ffi::{c_char, c_void};

use oxiserve_types::{Error, ErrorKind, Result};

use crate::{
    error::{ErrorHandle, arg, status, write},
    ffi::data_type_code,
    inference_response::InferenceResponseHandle,
};

/// Runs `f` on the response `response` points to.
fn with(
    response: *mut InferenceResponseHandle,
    f: impl FnOnce(&InferenceResponseHandle) -> Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a response the caller owns.
        f(unsafe { arg(response, "inference_response") }?)
    })
}

/// Triton's error for an index past a response's `count` `what`.
fn out_of_bounds(index: u32, count: usize, what: &str) -> Error {
    Error::invalid_arg(format!(
        "out of bounds index {index}: response has {count} {what}"
    ))
}

/// `TRITONSERVER_InferenceResponseDelete`: the outputs' buffers go back to
/// the allocator.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseDelete(
    inference_response: *mut InferenceResponseHandle,
) -> *mut ErrorHandle {
    status(|| {
        if !inference_response.is_null() {
            // SAFETY: a response the caller owned and gives up.
            drop(unsafe { Box::from_raw(inference_response) });
        }
        Ok(())
    })
}

/// `TRITONSERVER_InferenceResponseError`: a new error the caller owns, or
/// null for a successful response.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseError(
    inference_response: *mut InferenceResponseHandle,
) -> *mut ErrorHandle {
    with(inference_response, |r| match &r.error {
        Some(error) => Err(error.clone()),
        None => Ok(()),
    })
}

/// `TRITONSERVER_InferenceResponseModel`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseModel(
    inference_response: *mut InferenceResponseHandle,
    model_name: *mut *const c_char,
    model_version: *mut i64,
) -> *mut ErrorHandle {
    with(inference_response, |r| {
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(model_name, "model_name", r.model_name.as_ptr())?;
            write(model_version, "model_version", r.model_version)
        }
    })
}

/// `TRITONSERVER_InferenceResponseId`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseId(
    inference_response: *mut InferenceResponseHandle,
    request_id: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_response, |r| unsafe {
        write(request_id, "request_id", r.id.as_ptr())
    })
}

/// `TRITONSERVER_InferenceResponseParameterCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseParameterCount(
    inference_response: *mut InferenceResponseHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_response, |r| unsafe {
        write(count, "count", r.parameters.len() as u32)
    })
}

/// `TRITONSERVER_InferenceResponseParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseParameter(
    inference_response: *mut InferenceResponseHandle,
    index: u32,
    name: *mut *const c_char,
    kind: *mut u32,
    vvalue: *mut *const c_void,
) -> *mut ErrorHandle {
    with(inference_response, |r| {
        let parameter = r
            .parameters
            .get(index as usize)
            .ok_or_else(|| out_of_bounds(index, r.parameters.len(), "parameters"))?;
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(name, "name", parameter.name.as_ptr())?;
            write(kind, "type", parameter.value.type_code())?;
            write(vvalue, "vvalue", parameter.value.value_ptr())
        }
    })
}

/// `TRITONSERVER_InferenceResponseOutputCount`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseOutputCount(
    inference_response: *mut InferenceResponseHandle,
    count: *mut u32,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(inference_response, |r| unsafe {
        write(count, "count", r.outputs.len() as u32)
    })
}

/// `TRITONSERVER_InferenceResponseOutput`: the output's description and
/// the buffer the allocator gave for it.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseOutput(
    inference_response: *mut InferenceResponseHandle,
    index: u32,
    name: *mut *const c_char,
    datatype: *mut u32,
    shape: *mut *const i64,
    dim_count: *mut u64,
    base: *mut *const c_void,
    byte_size: *mut usize,
    memory_type: *mut u32,
    memory_type_id: *mut i64,
    userp: *mut *mut c_void,
) -> *mut ErrorHandle {
    with(inference_response, |r| {
        let output = r
            .outputs
            .get(index as usize)
            .ok_or_else(|| out_of_bounds(index, r.outputs.len(), "outputs"))?;
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(name, "name", output.name.as_ptr())?;
            write(datatype, "datatype", data_type_code(output.dtype))?;
            write(shape, "shape", output.shape.as_ptr())?;
            write(dim_count, "dim_count", output.shape.len() as u64)?;
            write(base, "base", output.buffer as *const c_void)?;
            write(byte_size, "byte_size", output.byte_size)?;
            write(memory_type, "memory_type", output.memory_type)?;
            write(memory_type_id, "memory_type_id", output.memory_type_id)?;
            write(userp, "userp", output.buffer_userp as *mut c_void)
        }
    })
}

/// `TRITONSERVER_InferenceResponseOutputClassificationLabel`: labels are
/// not available through this server's C API.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InferenceResponseOutputClassificationLabel(
    inference_response: *mut InferenceResponseHandle,
    _index: u32,
    _class_index: usize,
    _label: *mut *const c_char,
) -> *mut ErrorHandle {
    with(inference_response, |_| {
        Err(Error::new(
            ErrorKind::Unsupported,
            "classification labels are not available through this server's C API",
        ))
    })
}
