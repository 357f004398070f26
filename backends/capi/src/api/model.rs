//! `TRITONBACKEND_Model*`.

use std::{
    ffi::{c_char, c_void},
    sync::atomic::Ordering,
};

use oxiserve_config::to_json;

use crate::{
    buffer::BufferAttributesHandle,
    error::{ErrorHandle, arg, status, write},
    library::BackendHandle,
    message::MessageHandle,
    model::{ModelHandle, check_config_version},
    server::ServerHandle,
};

/// `TRITONBACKEND_ARTIFACT_FILESYSTEM`.
const ARTIFACT_FILESYSTEM: u32 = 0;

/// Runs `f` on the model `model` points to.
fn with(
    model: *mut ModelHandle,
    f: impl FnOnce(&ModelHandle) -> oxiserve_types::Result<()>,
) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: null or a model this server handed the library, alive
        // until its TRITONBACKEND_ModelFinalize returns.
        f(unsafe { arg(model, "model") }?)
    })
}

/// `TRITONBACKEND_ModelName`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelName(
    model: *mut ModelHandle,
    name: *mut *const c_char,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe { write(name, "name", m.name.as_ptr()) })
}

/// `TRITONBACKEND_ModelVersion`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelVersion(
    model: *mut ModelHandle,
    version: *mut u64,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe { write(version, "version", m.version) })
}

/// `TRITONBACKEND_ModelRepository`: the model's folder.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelRepository(
    model: *mut ModelHandle,
    artifact_type: *mut u32,
    location: *mut *const c_char,
) -> *mut ErrorHandle {
    with(model, |m| {
        // SAFETY: out-arguments, null refused.
        unsafe { write(artifact_type, "artifact_type", ARTIFACT_FILESYSTEM)? };
        // SAFETY: as above.
        unsafe { write(location, "location", m.repository.as_ptr()) }
    })
}

/// `TRITONBACKEND_ModelConfig`: the configuration's JSON (as `/config`
/// serves it), in a message the caller owns.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelConfig(
    model: *mut ModelHandle,
    config_version: u32,
    model_config: *mut *mut MessageHandle,
) -> *mut ErrorHandle {
    with(model, |m| {
        check_config_version(config_version)?;
        let json = to_json(&m.config.lock());
        let message = Box::into_raw(Box::new(MessageHandle::of(&json)));
        // SAFETY: an out-argument, null refused.
        unsafe { write(model_config, "model_config", message) }.inspect_err(|_| {
            // SAFETY: just made, not handed out.
            drop(unsafe { Box::from_raw(message) });
        })
    })
}

/// `TRITONBACKEND_ModelAutoCompleteConfig`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelAutoCompleteConfig(
    model: *mut ModelHandle,
    auto_complete_config: *mut bool,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe {
        write(
            auto_complete_config,
            "auto_complete_config",
            m.auto_complete,
        )
    })
}

/// `TRITONBACKEND_ModelSetConfig`: the backend's completed configuration.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelSetConfig(
    model: *mut ModelHandle,
    config_version: u32,
    model_config: *mut MessageHandle,
) -> *mut ErrorHandle {
    with(model, |m| {
        // SAFETY: null or a live message.
        let message = unsafe { arg(model_config, "model_config") }?;
        m.update_config(config_version, message.json())
    })
}

/// `TRITONBACKEND_ModelServer`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelServer(
    model: *mut ModelHandle,
    server: *mut *const ServerHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe {
        write(server, "server", &raw const m.server)
    })
}

/// `TRITONBACKEND_ModelBackend`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelBackend(
    model: *mut ModelHandle,
    backend: *mut *const BackendHandle,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe {
        write(backend, "backend", std::sync::Arc::as_ptr(&m.backend))
    })
}

/// `TRITONBACKEND_ModelState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelState(
    model: *mut ModelHandle,
    state: *mut *mut c_void,
) -> *mut ErrorHandle {
    // SAFETY: an out-argument, null refused.
    with(model, |m| unsafe {
        write(state, "state", m.state.load(Ordering::Acquire))
    })
}

/// `TRITONBACKEND_ModelSetState`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelSetState(
    model: *mut ModelHandle,
    state: *mut c_void,
) -> *mut ErrorHandle {
    with(model, |m| {
        m.state.store(state, Ordering::Release);
        Ok(())
    })
}

/// `TRITONBACKEND_ModelReportMemoryUsage`: accepted; this server does not
/// report model memory.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ModelReportMemoryUsage(
    model: *mut ModelHandle,
    _usage: *mut *mut BufferAttributesHandle,
    _usage_size: u32,
) -> *mut ErrorHandle {
    with(model, |_| Ok(()))
}
