//! Triton's CUDA shared memory extension in a build without GPU support:
//! no CUDA region can be registered, so none exists. Every frontend answers
//! through these functions, worded as such a Triton answers.

use oxiserve_types::{Error, Result};

/// The status of CUDA regions: none are registered; a named one is not found.
pub fn cuda_status(name: Option<&str>) -> Result<()> {
    match name {
        None => Ok(()),
        Some(name) => Err(Error::not_found(format!(
            "Unable to find cuda shared memory region: '{name}'"
        ))),
    }
}

/// Registering a CUDA region is refused: this build has no GPU support.
pub fn cuda_register(name: &str) -> Result<()> {
    Err(Error::invalid_arg(format!(
        "failed to register CUDA shared memory region: '{name}', GPUs not supported (CUDA \
         shared memory is not supported in this build)"
    )))
}
