//! Triton's system shared memory extension, protocol-neutral: the registry
//! of regions every frontend shares, and how request tensors read their
//! inputs from regions and write their outputs into them.

mod cuda;
mod region;
mod tensors;
#[cfg(test)]
mod tests;

use std::{
    collections::BTreeMap,
    sync::{Arc, RwLock},
};

use oxiserve_types::{Error, Result};

pub use cuda::{cuda_register, cuda_status};
pub use region::RegionStatus;
pub(crate) use tensors::OutputRegion;

use region::Region;

/// The registered system shared memory regions, by name. Requests hold the
/// regions they use, so unregistering a region while a request uses it
/// unmaps it only once that request is done.
#[derive(Debug, Default)]
pub struct SharedMemoryRegistry {
    regions: RwLock<BTreeMap<String, Arc<Region>>>,
}

impl SharedMemoryRegistry {
    /// Registers the part `[offset, offset + byte_size)` of the POSIX shared
    /// memory object `key` (its `shm_open` name, e.g. "/input0") as region
    /// `name`. Errors, worded as Triton's: `name` already registered
    /// (`AlreadyExists`), `key` cannot be opened (`Internal`), an empty part
    /// or one beyond the object's end (`InvalidArg`).
    ///
    /// Unlike Triton 2.51, one key may back several regions and `offset`
    /// need not be a multiple of the page size.
    pub fn register(&self, name: &str, key: &str, offset: u64, byte_size: u64) -> Result<()> {
        if self.regions.read().unwrap().contains_key(name) {
            return Err(already_registered(name));
        }
        // Mapped outside the lock; a racing registration of the same name
        // is caught below.
        let region = Region::open(RegionStatus {
            name: name.to_string(),
            key: key.to_string(),
            offset,
            byte_size,
        })?;
        let mut regions = self.regions.write().unwrap();
        if regions.contains_key(name) {
            return Err(already_registered(name));
        }
        regions.insert(name.to_string(), Arc::new(region));
        Ok(())
    }

    /// Unregisters region `name`; like Triton, an unknown name is no error.
    pub fn unregister(&self, name: &str) {
        self.regions.write().unwrap().remove(name);
    }

    /// Unregisters every region.
    pub fn unregister_all(&self) {
        self.regions.write().unwrap().clear();
    }

    /// The regions in name order: all of them, or only `name` (then an
    /// unknown name is `NotFound`, "Unable to find system shared memory
    /// region: 'name'").
    pub fn status(&self, name: Option<&str>) -> Result<Vec<RegionStatus>> {
        let regions = self.regions.read().unwrap();
        match name {
            None => Ok(regions.values().map(|r| r.status.clone()).collect()),
            Some(name) => regions
                .get(name)
                .map(|r| vec![r.status.clone()])
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "Unable to find system shared memory region: '{name}'"
                    ))
                }),
        }
    }

    /// The region `name`, for a request ("Unable to find shared memory
    /// region: 'name'" when unknown, as Triton words it).
    fn get(&self, name: &str) -> Result<Arc<Region>> {
        self.regions
            .read()
            .unwrap()
            .get(name)
            .cloned()
            .ok_or_else(|| {
                Error::not_found(format!("Unable to find shared memory region: '{name}'"))
            })
    }
}

fn already_registered(name: &str) -> Error {
    Error::new(
        oxiserve_types::ErrorKind::AlreadyExists,
        format!("shared memory region '{name}' already in manager"),
    )
}
