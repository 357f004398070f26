//! One backend library: opened once (`RTLD_NOW | RTLD_LOCAL`, as Triton),
//! its entry points found, `TRITONBACKEND_Initialize` called; the object
//! behind `TRITONBACKEND_Backend*`, shared by every model it loads, and
//! finalized when the last of them and the loader let go of it. The
//! library itself is never closed: threads it started may outlive it.

use std::{
    ffi::{CString, c_void},
    path::{Path, PathBuf},
    ptr,
    sync::{
        Arc,
        atomic::{AtomicPtr, AtomicU32},
    },
};

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::Mutex;

use crate::{
    error::ErrorHandle,
    ffi::{c_path, c_string, dl_message},
    message::MessageHandle,
    soname::provide_libtritonserver,
};

/// `TRITONBACKEND_Initialize` / `_Finalize`.
type BackendFn = unsafe extern "C" fn(*mut c_void) -> *mut ErrorHandle;
/// `TRITONBACKEND_GetBackendAttribute`.
type AttributeFn =
    unsafe extern "C" fn(*mut c_void, *mut BackendAttributeHandle) -> *mut ErrorHandle;
/// `TRITONBACKEND_ModelInitialize` / `_Finalize`, `ModelInstanceInitialize` / `_Finalize`.
pub type HandleFn = unsafe extern "C" fn(*mut c_void) -> *mut ErrorHandle;
/// `TRITONBACKEND_ModelInstanceExecute`.
pub type ExecuteFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, u32) -> *mut ErrorHandle;

/// The library's entry points; all but execute are optional.
#[derive(Debug, Clone, Copy)]
pub struct EntryPoints {
    initialize: Option<BackendFn>,
    finalize: Option<BackendFn>,
    attribute: Option<AttributeFn>,
    pub model_initialize: Option<HandleFn>,
    pub model_finalize: Option<HandleFn>,
    pub instance_initialize: Option<HandleFn>,
    pub instance_finalize: Option<HandleFn>,
    pub execute: ExecuteFn,
}

/// One `TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreferredGroup {
    pub kind: u32,
    pub count: u64,
    pub device_ids: Vec<u64>,
}

/// The object behind a `TRITONBACKEND_BackendAttribute*`: what
/// `TRITONBACKEND_GetBackendAttribute` sets. Kept for the log; the server
/// completes instance groups its own way.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct BackendAttributeHandle {
    pub preferred_groups: Vec<PreferredGroup>,
    pub parallel_instance_loading: bool,
}

/// The object behind a `TRITONBACKEND_Backend*`.
#[derive(Debug)]
pub struct BackendHandle {
    pub name: CString,
    /// The library's folder (`TRITONBACKEND_BackendArtifacts`).
    pub directory: CString,
    pub path: PathBuf,
    /// `{"cmdline": {...}}`.
    pub config: MessageHandle,
    pub state: AtomicPtr<c_void>,
    /// `TRITONBACKEND_ExecutionPolicy`; each instance runs on its own
    /// thread whichever the backend sets.
    pub execution_policy: AtomicU32,
    pub attributes: Mutex<BackendAttributeHandle>,
    pub entry: EntryPoints,
}

impl BackendHandle {
    /// Opens the library at `path` as backend `name` and initializes it
    /// with `config`.
    pub fn open(name: &str, path: &Path, config: &serde_json::Value) -> Result<Arc<Self>> {
        provide_libtritonserver().map_err(Error::internal)?;
        // SAFETY: opening a backend library runs its initializers; loading
        // the backends the repository names is what the operator asked for.
        let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
            Error::not_found(format!("unable to load shared library: {}", dl_message(&e)))
        })?;
        let entry = entry_points(&library)?;
        // Never closed: threads the library starts may outlive its backend.
        library.into_raw();
        let backend = Arc::new(Self {
            name: c_string(name),
            directory: c_path(path.parent().unwrap_or(Path::new("/"))),
            path: path.to_path_buf(),
            config: MessageHandle::of(config),
            state: AtomicPtr::new(ptr::null_mut()),
            execution_policy: AtomicU32::new(0),
            attributes: Mutex::default(),
            entry,
        });
        if let Some(initialize) = entry.initialize {
            // SAFETY: the library's TRITONBACKEND_Initialize, with the
            // handle it is documented to take, alive across the call.
            let error = unsafe { initialize(backend.as_ptr()) };
            // SAFETY: an error a backend returns is one TRITONSERVER_ErrorNew
            // made, handed over to the caller.
            if let Some(error) = unsafe { ErrorHandle::take(error) } {
                return Err(entry_point_error("TRITONBACKEND_Initialize", error));
            }
        }
        backend.read_attributes();
        Ok(backend)
    }

    /// The pointer the library knows it by.
    pub fn as_ptr(self: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(self).cast_mut().cast()
    }

    /// Its name as text.
    pub fn name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }

    /// Asks the library's `TRITONBACKEND_GetBackendAttribute`, if it has
    /// one; as Triton, a failure is not fatal.
    fn read_attributes(self: &Arc<Self>) {
        let Some(attribute) = self.entry.attribute else {
            return;
        };
        let mut attributes = BackendAttributeHandle::default();
        // SAFETY: the library's TRITONBACKEND_GetBackendAttribute with the
        // backend and an attribute object, both alive across the call.
        let error = unsafe { attribute(self.as_ptr(), &mut attributes) };
        // SAFETY: as in `open`.
        match unsafe { ErrorHandle::take(error) } {
            Some(error) => log::warn!(
                "backend '{}': TRITONBACKEND_GetBackendAttribute failed: {}",
                self.name(),
                error.message
            ),
            None => {
                log::debug!("backend '{}' attributes: {attributes:?}", self.name());
                *self.attributes.lock() = attributes;
            }
        }
    }
}

impl Drop for BackendHandle {
    fn drop(&mut self) {
        log::debug!("unloading backend '{}'", self.name());
        let Some(finalize) = self.entry.finalize else {
            return;
        };
        // SAFETY: the library's TRITONBACKEND_Finalize with its backend,
        // which stays alive until this function returns; the library is
        // still loaded (it never closes).
        let error = unsafe { finalize(ptr::from_mut(self).cast()) };
        // SAFETY: as in `open`.
        if let Some(error) = unsafe { ErrorHandle::take(error) } {
            log::error!(
                "failed finalizing backend '{}': {}",
                self.name(),
                error.message
            );
        }
    }
}

/// A backend's error from `entry_point`, its kind kept.
pub fn entry_point_error(entry_point: &str, error: Error) -> Error {
    Error::new(error.kind, format!("{entry_point}: {}", error.message))
}

/// Calls a model's or instance's entry point `name` with `handle`; its
/// error, if any, names it.
pub fn call_entry_point(name: &str, entry_point: HandleFn, handle: *mut c_void) -> Result<()> {
    // SAFETY: the library's entry point of that name takes the one handle
    // given, which the caller keeps alive across the call.
    let error = unsafe { entry_point(handle) };
    // SAFETY: an error a backend returns is one TRITONSERVER_ErrorNew made,
    // handed over to the caller.
    match unsafe { ErrorHandle::take(error) } {
        Some(error) => Err(entry_point_error(name, error)),
        None => Ok(()),
    }
}

/// A failure to load model `model` from the library at `path`, naming both.
pub fn load_failure(model: &str, path: &Path, error: Error) -> Error {
    Error::new(
        error.kind,
        format!(
            "model '{model}' (backend library {}): {}",
            path.display(),
            error.message
        ),
    )
}

fn entry_points(library: &Library) -> Result<EntryPoints> {
    Ok(EntryPoints {
        initialize: optional(library, "TRITONBACKEND_Initialize"),
        finalize: optional(library, "TRITONBACKEND_Finalize"),
        attribute: optional(library, "TRITONBACKEND_GetBackendAttribute"),
        model_initialize: optional(library, "TRITONBACKEND_ModelInitialize"),
        model_finalize: optional(library, "TRITONBACKEND_ModelFinalize"),
        instance_initialize: optional(library, "TRITONBACKEND_ModelInstanceInitialize"),
        instance_finalize: optional(library, "TRITONBACKEND_ModelInstanceFinalize"),
        execute: required(library, "TRITONBACKEND_ModelInstanceExecute")?,
    })
}

fn optional<T: Copy>(library: &Library, name: &str) -> Option<T> {
    // SAFETY: `T` is the entry point's type as tritonbackend.h declares it.
    unsafe { library.get::<T>(name) }.ok().map(|symbol| *symbol)
}

fn required<T: Copy>(library: &Library, name: &str) -> Result<T> {
    // SAFETY: as in `optional`.
    let symbol = unsafe { library.get::<T>(name) }.map_err(|e| {
        Error::new(
            ErrorKind::NotFound,
            format!(
                "unable to find required entrypoint '{name}' in shared library: {}",
                dl_message(&e)
            ),
        )
    })?;
    Ok(*symbol)
}
