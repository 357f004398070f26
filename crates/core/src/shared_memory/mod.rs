//! Triton's system shared memory extension, protocol-neutral: the registry
//! of regions every frontend shares, and how request tensors read their
//! inputs from regions and write their outputs into them.

mod cuda;
mod region;
mod tensors;
#[cfg(test)]
mod tests;

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Weak},
};

use oxiserve_types::{Error, ErrorKind, Result};
use parking_lot::{Mutex, RwLock};

pub use region::RegionStatus;
pub(crate) use tensors::OutputRegion;

use region::{Region, RegionLease, SharedObject};

/// How many regions may be registered at once unless the server says.
pub const DEFAULT_MAX_REGIONS: usize = 4096;

/// The registered system shared memory regions, by name. A request holds a
/// lease on each region it names until its final response, and, as in
/// Triton, a region in use cannot be unregistered. Regions of one object
/// share its descriptor, and the number of regions is capped, so that
/// registrations cannot exhaust the server's file descriptors.
#[derive(Debug)]
pub struct SharedMemoryRegistry {
    regions: RwLock<BTreeMap<String, Arc<Region>>>,
    /// The open objects by device and inode, while a region holds them.
    objects: Mutex<HashMap<(u64, u64), Weak<SharedObject>>>,
    max_regions: usize,
}

impl Default for SharedMemoryRegistry {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_REGIONS)
    }
}

impl SharedMemoryRegistry {
    /// A registry that holds at most `max_regions` regions.
    pub fn new(max_regions: usize) -> Self {
        Self {
            regions: RwLock::default(),
            objects: Mutex::default(),
            max_regions,
        }
    }

    /// Registers the part `[offset, offset + byte_size)` of the POSIX shared
    /// memory object `key` (its `shm_open` name, e.g. "/input0") as region
    /// `name`. Errors, worded as Triton's: `name` already registered
    /// (`AlreadyExists`), `key` cannot be opened (`Internal`), an empty part
    /// or one beyond the object's end (`InvalidArg`).
    ///
    /// Unlike Triton 2.51, one key may back several regions and `offset`
    /// need not be a multiple of the page size. A symbolic link in
    /// `/dev/shm` is refused, as `shm_open` refuses it; past the region
    /// limit registrations are `ResourceExhausted`.
    pub fn register(&self, name: &str, key: &str, offset: u64, byte_size: u64) -> Result<()> {
        self.check_room(&self.regions.read(), name)?;
        // Opened outside the lock; a racing registration of the same name
        // is caught below.
        let status = RegionStatus {
            name: name.to_string(),
            key: key.to_string(),
            offset,
            byte_size,
        };
        let region = Region::new(status, self.open_object(key)?)?;
        let mut regions = self.regions.write();
        self.check_room(&regions, name)?;
        regions.insert(name.to_string(), Arc::new(region));
        Ok(())
    }

    /// Whether region `name` may be added to `regions`.
    fn check_room(&self, regions: &BTreeMap<String, Arc<Region>>, name: &str) -> Result<()> {
        if regions.contains_key(name) {
            return Err(already_registered(name));
        }
        if regions.len() >= self.max_regions {
            return Err(Error::new(
                ErrorKind::ResourceExhausted,
                format!(
                    "failed to register shared memory region '{name}': {} regions are registered, \
                     the most this server allows (--shared-memory-region-limit)",
                    regions.len()
                ),
            ));
        }
        Ok(())
    }

    /// The object `key`, sharing the descriptor of a region already on it.
    fn open_object(&self, key: &str) -> Result<Arc<SharedObject>> {
        let opened = SharedObject::open(key)?;
        let mut objects = self.objects.lock();
        objects.retain(|_, object| object.strong_count() > 0);
        if let Some(open) = objects.get(&opened.id).and_then(Weak::upgrade) {
            return Ok(open);
        }
        let object = Arc::new(opened);
        objects.insert(object.id, Arc::downgrade(&object));
        Ok(object)
    }

    /// Unregisters region `name`; like Triton, an unknown name is no error.
    /// A region a request uses (from the moment it names the region until
    /// its final response) stays registered: Triton's internal error,
    /// "Cannot unregister shared memory region 'name', it is currently in
    /// use."
    pub fn unregister(&self, name: &str) -> Result<()> {
        let mut regions = self.regions.write();
        if let Some(region) = regions.get(name) {
            if region.in_use() {
                return Err(Error::internal(format!(
                    "Cannot unregister shared memory region '{name}', it is currently in use."
                )));
            }
            regions.remove(name);
        }
        Ok(())
    }

    /// Unregisters every region no request uses. Those in use stay, and,
    /// worded as Triton's, the error lists them in name order: "Failed to
    /// unregister the following system shared memory regions: a ,b ,".
    pub fn unregister_all(&self) -> Result<()> {
        let mut regions = self.regions.write();
        regions.retain(|_, region| region.in_use());
        if regions.is_empty() {
            return Ok(());
        }
        let mut message =
            String::from("Failed to unregister the following system shared memory regions: ");
        for name in regions.keys() {
            message.push_str(name);
            message.push_str(" ,");
        }
        Err(Error::internal(message))
    }

    /// The regions in name order: all of them, or only `name` (then an
    /// unknown name is `NotFound`, "Unable to find system shared memory
    /// region: 'name'").
    pub fn status(&self, name: Option<&str>) -> Result<Vec<RegionStatus>> {
        let regions = self.regions.read();
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

    /// A lease on region `name`, for a request ("Unable to find shared
    /// memory region: 'name'" when unknown, as Triton words it). Made under
    /// the lock, so that [`SharedMemoryRegistry::unregister`] sees it.
    fn lease(&self, name: &str) -> Result<RegionLease> {
        self.regions
            .read()
            .get(name)
            .map(RegionLease::new)
            .ok_or_else(|| {
                Error::not_found(format!("Unable to find shared memory region: '{name}'"))
            })
    }

    /// Whether `name` is a registered system shared memory region.
    fn contains(&self, name: &str) -> bool {
        self.regions.read().contains_key(name)
    }
}

fn already_registered(name: &str) -> Error {
    Error::new(
        ErrorKind::AlreadyExists,
        format!("shared memory region '{name}' already in manager"),
    )
}
