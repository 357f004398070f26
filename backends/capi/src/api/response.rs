//! `TRITONBACKEND_Response*`: building a response (parameters, outputs) and
//! sending it, and reading back the outputs of one being built.

use std::{ffi::c_char, sync::Arc};

use oxiserve_types::{Error, ParameterValue};

use crate::{
    api::factory::FactoryHandle,
    error::{ErrorHandle, arg, shape_arg, status, write},
    ffi::{RESPONSE_FINAL, data_type, data_type_code, null_argument, str_of},
    request::RequestHandle,
    response::{OutputHandle, ResponseHandle},
    sink::SharedSink,
};

/// Writes through `response` a new response, owned by the caller, for the
/// sink `sink` gives.
fn new_response<'a>(
    response: *mut *mut ResponseHandle,
    sink: impl FnOnce() -> oxiserve_types::Result<&'a Arc<SharedSink>>,
) -> *mut ErrorHandle {
    status(|| {
        let handle = Box::into_raw(Box::new(ResponseHandle::new(sink()?.clone())));
        // SAFETY: an out-argument, null refused.
        unsafe { write(response, "response", handle) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(handle) });
        })
    })
}

/// `TRITONBACKEND_ResponseNew`: a response to `request`, owned by the caller.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseNew(
    response: *mut *mut ResponseHandle,
    request: *mut RequestHandle,
) -> *mut ErrorHandle {
    // SAFETY: null or a request the backend holds.
    new_response(response, || Ok(&unsafe { arg(request, "request") }?.sink))
}

/// `TRITONBACKEND_ResponseNewFromFactory`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseNewFromFactory(
    response: *mut *mut ResponseHandle,
    factory: *mut FactoryHandle,
) -> *mut ErrorHandle {
    // SAFETY: null or a live factory.
    new_response(response, || unsafe { arg(factory, "factory") })
}

/// Takes back `response`, which the caller owned and gives up, or Triton's
/// error for null.
///
/// # Safety
/// `response` is null or a response the caller owns and uses no more.
unsafe fn take(response: *mut ResponseHandle) -> oxiserve_types::Result<Box<ResponseHandle>> {
    if response.is_null() {
        return Err(null_argument("response"));
    }
    // SAFETY: non-null, and the caller gives it up.
    Ok(unsafe { Box::from_raw(response) })
}

/// `TRITONBACKEND_ResponseDelete`: a response never sent.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseDelete(response: *mut ResponseHandle) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: a response the caller owned and gives up.
        drop(unsafe { take(response) }?);
        Ok(())
    })
}

/// Runs `f` on the response `response` points to.
fn with(
    response: *mut ResponseHandle,
    f: impl FnOnce(&mut ResponseHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a response the caller owns, used by one thread.
        f(unsafe { response.as_mut() }.ok_or_else(|| null_argument("response"))?)
    })
}

/// Adds parameter `name` of `value` to `response`.
fn set_parameter(
    response: *mut ResponseHandle,
    name: *const c_char,
    value: oxiserve_types::Result<ParameterValue>,
) -> *mut ErrorHandle {
    with(response, |response| {
        // SAFETY: null or a C string.
        let name = unsafe { str_of(name) }.ok_or_else(|| null_argument("name"))?;
        response.parameters.insert(name.to_string(), value?);
        Ok(())
    })
}

/// `TRITONBACKEND_ResponseSetStringParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseSetStringParameter(
    response: *mut ResponseHandle,
    name: *const c_char,
    value: *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: null or a C string.
    let value = unsafe { str_of(value) }
        .map(|v| ParameterValue::String(v.to_string()))
        .ok_or_else(|| null_argument("value"));
    set_parameter(response, name, value)
}

/// `TRITONBACKEND_ResponseSetIntParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseSetIntParameter(
    response: *mut ResponseHandle,
    name: *const c_char,
    value: i64,
) -> *mut ErrorHandle {
    set_parameter(response, name, Ok(ParameterValue::Int(value)))
}

/// `TRITONBACKEND_ResponseSetBoolParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseSetBoolParameter(
    response: *mut ResponseHandle,
    name: *const c_char,
    value: bool,
) -> *mut ErrorHandle {
    set_parameter(response, name, Ok(ParameterValue::Bool(value)))
}

/// `TRITONBACKEND_ResponseSetDoubleParameter`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseSetDoubleParameter(
    response: *mut ResponseHandle,
    name: *const c_char,
    value: f64,
) -> *mut ErrorHandle {
    set_parameter(response, name, Ok(ParameterValue::Double(value)))
}

/// `TRITONBACKEND_ResponseOutput`: adds an output the model's
/// configuration declares; the response owns it.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseOutput(
    response: *mut ResponseHandle,
    output: *mut *const OutputHandle,
    name: *const c_char,
    datatype: u32,
    shape: *const i64,
    dims_count: u32,
) -> *mut ErrorHandle {
    with(response, |response| {
        // SAFETY: null or a C string.
        let name = unsafe { str_of(name) }.ok_or_else(|| null_argument("name"))?;
        let model = &response.sink.model;
        if !model.has_output(name) {
            return Err(Error::invalid_arg(format!(
                "unexpected inference output '{name}' for model '{}'",
                model.name
            )));
        }
        let dtype = data_type(datatype).ok_or_else(|| {
            Error::invalid_arg(format!(
                "output '{name}' has the invalid data type {datatype}"
            ))
        })?;
        // SAFETY: the caller gives `dims_count` dimensions at `shape`.
        let shape = unsafe { shape_arg(shape, dims_count as usize) }?;
        let added = response.add_output(name, dtype, shape);
        // SAFETY: an out-argument, null refused.
        unsafe { write(output, "output", std::ptr::from_ref(added)) }
    })
}

/// `TRITONBACKEND_ResponseSend`: sends the response (or `error`, which the
/// caller keeps), the final one with `TRITONSERVER_RESPONSE_COMPLETE_FINAL`;
/// the response is gone either way.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ResponseSend(
    response: *mut ResponseHandle,
    send_flags: u32,
    error: *mut ErrorHandle,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: a response the caller owned and hands over.
        let response = unsafe { take(response) }?;
        // SAFETY: null or a live error the caller keeps.
        let error = unsafe { error.as_ref() }.map(ErrorHandle::to_error);
        let sink = response.sink.clone();
        let sent = match error {
            Some(error) => Err(error),
            None => Ok(response.into_response()),
        };
        sink.send(sent, send_flags & RESPONSE_FINAL != 0)
    })
}

/// The output of `response` at `index`, or Triton's error.
fn output_at(response: &ResponseHandle, index: u32) -> oxiserve_types::Result<&OutputHandle> {
    response
        .outputs
        .get(index as usize)
        .map(|o| &**o)
        .ok_or_else(|| {
            Error::invalid_arg(format!(
                "out of bounds index {index}: response has {} outputs",
                response.outputs.len()
            ))
        })
}

/// Writes the data type and shape of the output of `response` that `find`
/// picks.
fn describe<'a>(
    response: *mut ResponseHandle,
    datatype: *mut u32,
    shape: *mut *const i64,
    dim_count: *mut u64,
    find: impl FnOnce(&'a ResponseHandle) -> oxiserve_types::Result<&'a OutputHandle>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a response the caller owns.
        let output = find(unsafe { arg(response, "response") }?)?;
        // SAFETY: out-arguments, null refused.
        unsafe {
            write(datatype, "datatype", data_type_code(output.dtype))?;
            write(shape, "shape", output.shape.as_ptr())?;
            write(dim_count, "dim_count", output.shape.len() as u64)
        }
    })
}

/// `TRITONBACKEND_InferenceResponseOutput`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_InferenceResponseOutput(
    response: *mut ResponseHandle,
    index: u32,
    name: *mut *const c_char,
    datatype: *mut u32,
    shape: *mut *const i64,
    dim_count: *mut u64,
) -> *mut ErrorHandle {
    describe(response, datatype, shape, dim_count, |response| {
        let output = output_at(response, index)?;
        // SAFETY: an out-argument, null refused.
        unsafe { write(name, "name", output.name.as_ptr())? };
        Ok(output)
    })
}

/// `TRITONBACKEND_InferenceResponseOutputByName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_InferenceResponseOutputByName(
    response: *mut ResponseHandle,
    name: *const c_char,
    datatype: *mut u32,
    shape: *mut *const i64,
    dim_count: *mut u64,
) -> *mut ErrorHandle {
    describe(response, datatype, shape, dim_count, |response| {
        // SAFETY: null or a C string.
        let name = unsafe { str_of(name) }.ok_or_else(|| null_argument("name"))?;
        response
            .outputs
            .iter()
            .find(|o| o.name.to_bytes() == name.as_bytes())
            .map(|o| &**o)
            .ok_or_else(|| Error::not_found(format!("Output name {name}not found.")))
    })
}
