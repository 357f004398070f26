//! Triton's CUDA shared memory extension on a server without GPUs: no CUDA
//! region can be registered, so none exists. Every frontend answers through
//! these methods, worded as Triton 2.51 answers on a machine without GPUs
//! (its CUDA build, whose `cudaIpcOpenMemHandle` then fails). CUDA and
//! system regions share one namespace, as in Triton.

use oxiserve_types::{Error, Result};

use super::{SharedMemoryRegistry, already_registered};

impl SharedMemoryRegistry {
    /// The status of CUDA regions: none are registered; a named one is not
    /// found (and Triton says so differently for a system region's name).
    pub fn cuda_status(&self, name: Option<&str>) -> Result<()> {
        match name {
            None => Ok(()),
            Some(name) if self.contains(name) => Err(Error::not_found(format!(
                "The region named '{name}' is registered as system shared memory, not CUDA \
                 shared memory"
            ))),
            Some(name) => Err(Error::not_found(format!(
                "Unable to find cuda shared memory region: '{name}'"
            ))),
        }
    }

    /// Registering CUDA region `name` fails: a system region's name is
    /// taken (`AlreadyExists`), any other is Triton's invalid argument for
    /// an IPC handle no GPU can open, "failed to register shared memory
    /// region: invalid args".
    pub fn cuda_register(&self, name: &str) -> Result<()> {
        if self.contains(name) {
            return Err(already_registered(name));
        }
        Err(Error::invalid_arg(
            "failed to register shared memory region: invalid args",
        ))
    }
}
