//! The bodies of the entry points [`export_backend!`](crate::export_backend)
//! exports: each checks its handle, runs under [`guard`], and turns errors
//! and panics into a `TRITONSERVER_Error` for the host.

use std::sync::OnceLock;

use oxiserve_backend::Backend;
use oxiserve_types::{Error, ErrorKind};

use crate::abi::{
    self, API_VERSION_MAJOR, API_VERSION_MINOR, TRITONBACKEND_Backend, TRITONBACKEND_Model,
    TRITONBACKEND_ModelInstance, TRITONBACKEND_Request,
};
use crate::status::{Status, check, guard};
use crate::{execute, instance, model};

/// The library's backend, made by the first `TRITONBACKEND_Initialize`.
static BACKEND: OnceLock<Box<dyn Backend>> = OnceLock::new();

/// `TRITONBACKEND_Initialize`: checks the host's API version and makes the
/// backend.
pub fn initialize(
    backend: *mut TRITONBACKEND_Backend,
    make: impl FnOnce() -> Box<dyn Backend>,
) -> Status {
    guard("TRITONBACKEND_Initialize", || {
        non_null(backend, "backend")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the host writes two integers.
        check(unsafe { abi::TRITONBACKEND_ApiVersion(&mut major, &mut minor) })?;
        if major != API_VERSION_MAJOR || minor < API_VERSION_MINOR {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "triton backend API version {major}.{minor} does not support this backend \
                     (built for {API_VERSION_MAJOR}.{API_VERSION_MINOR})"
                ),
            ));
        }
        BACKEND.get_or_init(make);
        Ok(())
    })
}

/// `TRITONBACKEND_Finalize`: nothing to free (the backend lives as long as
/// the library).
pub fn finalize(backend: *mut TRITONBACKEND_Backend) -> Status {
    guard("TRITONBACKEND_Finalize", || non_null(backend, "backend"))
}

/// `TRITONBACKEND_ModelInitialize`.
pub fn model_initialize(handle: *mut TRITONBACKEND_Model) -> Status {
    guard("TRITONBACKEND_ModelInitialize", || {
        non_null(handle, "model")?;
        let backend = BACKEND
            .get()
            .ok_or_else(|| Error::internal("the backend library was not initialized"))?;
        model::initialize(backend.as_ref(), handle)
    })
}

/// `TRITONBACKEND_ModelFinalize`.
pub fn model_finalize(handle: *mut TRITONBACKEND_Model) -> Status {
    guard("TRITONBACKEND_ModelFinalize", || {
        non_null(handle, "model")?;
        model::finalize(handle)
    })
}

/// `TRITONBACKEND_ModelInstanceInitialize`.
pub fn instance_initialize(handle: *mut TRITONBACKEND_ModelInstance) -> Status {
    guard("TRITONBACKEND_ModelInstanceInitialize", || {
        non_null(handle, "model instance")?;
        instance::initialize(handle)
    })
}

/// `TRITONBACKEND_ModelInstanceFinalize`.
pub fn instance_finalize(handle: *mut TRITONBACKEND_ModelInstance) -> Status {
    guard("TRITONBACKEND_ModelInstanceFinalize", || {
        non_null(handle, "model instance")?;
        instance::finalize(handle)
    })
}

/// `TRITONBACKEND_ModelInstanceExecute`.
///
/// # Safety
/// `requests` points at `count` live requests the host hands over.
pub unsafe fn instance_execute(
    handle: *mut TRITONBACKEND_ModelInstance,
    requests: *mut *mut TRITONBACKEND_Request,
    count: u32,
) -> Status {
    guard("TRITONBACKEND_ModelInstanceExecute", || {
        non_null(handle, "model instance")?;
        let requests = if count == 0 {
            &[][..]
        } else {
            non_null(requests, "requests")?;
            // SAFETY: the caller's promise: `count` request pointers.
            unsafe { std::slice::from_raw_parts(requests, count as usize) }
        };
        execute::execute(handle, requests)
    })
}

fn non_null<T>(handle: *mut T, what: &str) -> oxiserve_types::Result<()> {
    if handle.is_null() {
        return Err(Error::invalid_arg(format!("{what} was nullptr")));
    }
    Ok(())
}
