//! Backend libraries built by Triton's build need `libtritonserver.so`
//! (`DT_NEEDED`); the Python backend of the `nvidia-pytriton` wheel needs
//! `libtritonserver-717102f0.so`. The dynamic loader satisfies a needed
//! library with one already loaded under that SONAME, so before the first
//! backend library opens, two empty shared objects with those SONAMEs are
//! loaded (`RTLD_NOW | RTLD_GLOBAL`). They define nothing: a backend's
//! `TRITONBACKEND_*`/`TRITONSERVER_*` references resolve to the functions
//! the `oxiserve` binary exports (crates/server/build.rs).
//!
//! build.rs makes the two objects with the C compiler; they are carried in
//! the binary and opened from memory (`memfd_create`, then
//! `/proc/self/fd/N`), so no file needs installing and no environment
//! variable setting.

use std::{
    ffi::CString,
    fs::File,
    io::Write,
    os::fd::{FromRawFd, IntoRawFd},
    sync::OnceLock,
};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};

/// The SONAMEs and the bytes of their empty shared objects.
const STAND_INS: [(&str, &[u8]); 2] = [
    (
        "libtritonserver.so",
        include_bytes!(concat!(env!("OUT_DIR"), "/libtritonserver.so")),
    ),
    (
        "libtritonserver-717102f0.so",
        include_bytes!(concat!(env!("OUT_DIR"), "/libtritonserver-717102f0.so")),
    ),
];

/// Loads the stand-ins once per process; the error says why they could not
/// be (then a library that needs them fails to open, naming the SONAME).
pub fn provide_libtritonserver() -> Result<(), String> {
    static PROVIDED: OnceLock<Result<(), String>> = OnceLock::new();
    PROVIDED
        .get_or_init(|| {
            STAND_INS
                .iter()
                .try_for_each(|(name, bytes)| load(name, bytes))
        })
        .clone()
}

/// Opens `bytes` as a shared object, never to close it.
fn load(name: &str, bytes: &[u8]) -> Result<(), String> {
    let failed = |why: String| format!("cannot provide {name}: {why}");
    let c_name = CString::new(name).map_err(|e| failed(e.to_string()))?;
    // SAFETY: a valid C string and flags; the call has no other preconditions.
    let fd = unsafe { libc::memfd_create(c_name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(failed(std::io::Error::last_os_error().to_string()));
    }
    // SAFETY: `fd` was just created and nothing else owns it.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(bytes).map_err(|e| failed(e.to_string()))?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: the object is empty: it has no initializers to run.
    let library = unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| failed(crate::ffi::dl_message(&e)))?;
    // Never unloaded: backend libraries that need it may stay loaded as long.
    library.into_raw();
    // Nor is its file closed: the loader knows the object by its path, so
    // the next stand-in, given the same descriptor number, would be taken
    // for this one and never loaded.
    let _ = file.into_raw_fd();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sonames_are_loaded() {
        provide_libtritonserver().unwrap();
        for (name, _) in STAND_INS {
            // SAFETY: RTLD_NOLOAD only looks the name up among loaded objects.
            let found = unsafe { Library::open(Some(name), RTLD_NOW | libc::RTLD_NOLOAD) };
            assert!(found.is_ok(), "{name} is not loaded");
        }
    }
}
