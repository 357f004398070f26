//! `TRITONSERVER_Server*`: what a backend may ask of the server: whether a
//! model is ready or decoupled, loading and unloading models, and running
//! requests on them (`TRITONSERVER_ServerInferAsync`, in
//! inference_request.rs).

use std::ffi::c_char;

use bytes::Bytes;
use oxiserve_backend::LoadParameters;
use oxiserve_types::{Error, Result};

use crate::{
    error::{ErrorHandle, arg, status, write},
    ffi::{null_argument, str_of},
    parameter::{CValue, ParameterHandle},
    server::ServerHandle,
};

/// `TRITONSERVER_TXN_ONE_TO_ONE` / `TRITONSERVER_TXN_DECOUPLED`.
const TXN_ONE_TO_ONE: u32 = 1;
const TXN_DECOUPLED: u32 = 2;

/// Runs `f` on the server and the model name given.
fn with_model(
    server: *mut ServerHandle,
    model_name: *const c_char,
    f: impl FnOnce(&ServerHandle, &str) -> Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or the server of a live model.
        let server = unsafe { arg(server, "server") }?;
        // SAFETY: null or a C string.
        let name = unsafe { str_of(model_name) }.ok_or_else(|| null_argument("model_name"))?;
        f(server, name)
    })
}

/// A version argument: -1 (or any value below 1) asks for the policy's choice.
fn version(model_version: i64) -> Option<i64> {
    (model_version > 0).then_some(model_version)
}

/// `TRITONSERVER_ServerModelIsReady`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerModelIsReady(
    server: *mut ServerHandle,
    model_name: *const c_char,
    model_version: i64,
    ready: *mut bool,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        let is_ready = s.host().is_model_ready(name, version(model_version));
        // SAFETY: an out-argument, null refused.
        unsafe { write(ready, "ready", is_ready) }
    })
}

/// `TRITONSERVER_ServerModelTransactionProperties`: one-to-one or decoupled.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerModelTransactionProperties(
    server: *mut ServerHandle,
    model_name: *const c_char,
    model_version: i64,
    txn_flags: *mut u32,
    voidp: *mut *mut std::ffi::c_void,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        // SAFETY: null or an out-argument.
        unsafe { crate::ffi::put(voidp, std::ptr::null_mut()) };
        let decoupled = s.host().is_decoupled(name, version(model_version))?;
        let flags = if decoupled {
            TXN_DECOUPLED
        } else {
            TXN_ONE_TO_ONE
        };
        // SAFETY: an out-argument, null refused.
        unsafe { write(txn_flags, "txn_flags", flags) }
    })
}

/// `TRITONSERVER_ServerLoadModel`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerLoadModel(
    server: *mut ServerHandle,
    model_name: *const c_char,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        s.host().load_model(name, LoadParameters::default())
    })
}

/// `TRITONSERVER_ServerLoadModelWithParameters`: `config` (a string: the
/// configuration's JSON) and `file:<path>` (bytes: a file of the model's
/// folder) parameters.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerLoadModelWithParameters(
    server: *mut ServerHandle,
    model_name: *const c_char,
    parameters: *const *const ParameterHandle,
    parameter_count: u64,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        if parameters.is_null() && parameter_count != 0 {
            return Err(Error::invalid_arg(
                "load parameters are not provided while parameter count is non-zero",
            ));
        }
        let given = if parameter_count == 0 {
            &[][..]
        } else {
            // SAFETY: the caller gives `parameter_count` parameter pointers.
            unsafe { std::slice::from_raw_parts(parameters, parameter_count as usize) }
        };
        let mut load = LoadParameters::default();
        for &parameter in given {
            // SAFETY: null or a live parameter.
            let parameter = unsafe { arg(parameter, "parameter") }?;
            let key = parameter.name();
            match (&parameter.value, key.strip_prefix("file:")) {
                (CValue::String(config), None) if key == "config" => {
                    load.config = Some(config.to_string_lossy().into_owned());
                }
                (CValue::Bytes(bytes), Some(path)) => {
                    load.files
                        .push((path.to_string(), Bytes::copy_from_slice(bytes)));
                }
                (value, _) => {
                    return Err(Error::invalid_arg(format!(
                        "Unrecognized load parameter '{key}' with type '{}'",
                        type_name(value)
                    )));
                }
            }
        }
        s.host().load_model(name, load)
    })
}

fn type_name(value: &CValue) -> &'static str {
    match value {
        CValue::String(_) => "STRING",
        CValue::Int(_) => "INT",
        CValue::Bool(_) => "BOOL",
        CValue::Double(_) => "DOUBLE",
        CValue::Bytes(_) => "BYTES",
    }
}

/// `TRITONSERVER_ServerUnloadModel`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerUnloadModel(
    server: *mut ServerHandle,
    model_name: *const c_char,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        s.host().unload_model(name, false)
    })
}

/// `TRITONSERVER_ServerUnloadModelAndDependents`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ServerUnloadModelAndDependents(
    server: *mut ServerHandle,
    model_name: *const c_char,
) -> *mut ErrorHandle {
    with_model(server, model_name, |s, name| {
        s.host().unload_model(name, true)
    })
}
