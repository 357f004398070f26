//! Builds a Triton backend shared library from an oxiserve [`Backend`]: the
//! `TRITONBACKEND_*` entry points a host calls (`Initialize`,
//! `ModelInitialize`, `ModelInstanceInitialize`, `ModelInstanceExecute` and
//! their `Finalize`s), each turned into the backend contract's calls. The
//! server opens such a library (`libtriton_<name>.so`) only when a model of
//! its backend loads, so a heavy runtime (libtorch) is mapped only then.
//!
//! A backend crate built as a `cdylib` exports its entry points with
//! [`export_backend!`]:
//!
//! ```text
//! oxiserve_backend_library::export_backend!(MyBackend::default());
//! ```
//!
//! Requests cross the boundary by copy (the host's input buffers into
//! tensors, output tensors into the host's buffers); responses go through a
//! response factory of each request, so a model may answer after execute
//! returns. Models loaded this way have no [`oxiserve_backend::ModelHost`]:
//! they cannot call other models.

#[doc(hidden)]
pub mod abi;
mod clock;
#[doc(hidden)]
pub mod entry;
mod execute;
mod instance;
mod model;
mod request;
mod response;
mod status;

pub use oxiserve_backend::Backend;

/// Exports the `TRITONBACKEND_*` entry points of the library this crate
/// builds, serving `backend` (an expression making the [`Backend`], run
/// once, when the host initializes the library).
#[macro_export]
macro_rules! export_backend {
    ($backend:expr) => {
        /// Triton's `TRITONBACKEND_Initialize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_Initialize(
            backend: *mut $crate::abi::TRITONBACKEND_Backend,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::initialize(backend, || ::std::boxed::Box::new($backend))
        }

        /// Triton's `TRITONBACKEND_Finalize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_Finalize(
            backend: *mut $crate::abi::TRITONBACKEND_Backend,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::finalize(backend)
        }

        /// Triton's `TRITONBACKEND_ModelInitialize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_ModelInitialize(
            model: *mut $crate::abi::TRITONBACKEND_Model,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::model_initialize(model)
        }

        /// Triton's `TRITONBACKEND_ModelFinalize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_ModelFinalize(
            model: *mut $crate::abi::TRITONBACKEND_Model,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::model_finalize(model)
        }

        /// Triton's `TRITONBACKEND_ModelInstanceInitialize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_ModelInstanceInitialize(
            instance: *mut $crate::abi::TRITONBACKEND_ModelInstance,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::instance_initialize(instance)
        }

        /// Triton's `TRITONBACKEND_ModelInstanceFinalize`.
        #[unsafe(no_mangle)]
        pub extern "C" fn TRITONBACKEND_ModelInstanceFinalize(
            instance: *mut $crate::abi::TRITONBACKEND_ModelInstance,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            $crate::entry::instance_finalize(instance)
        }

        /// Triton's `TRITONBACKEND_ModelInstanceExecute`.
        ///
        /// # Safety
        /// `requests` points at `count` requests the host hands over.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn TRITONBACKEND_ModelInstanceExecute(
            instance: *mut $crate::abi::TRITONBACKEND_ModelInstance,
            requests: *mut *mut $crate::abi::TRITONBACKEND_Request,
            count: u32,
        ) -> *mut $crate::abi::TRITONSERVER_Error {
            // SAFETY: the caller's promise.
            unsafe { $crate::entry::instance_execute(instance, requests, count) }
        }
    };
}
