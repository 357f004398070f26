//! One registered system shared memory region: a part of a POSIX shared
//! memory object (`shm_open` name, as `tritonclient.utils.shared_memory`
//! creates it), and the bounds checks on the parts requests use.

use std::{
    fs::{File, OpenOptions},
    ops::Deref,
    os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt},
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use bytes::Bytes;
use oxiserve_types::{Error, ErrorKind, Result};

/// Where Linux keeps POSIX shared memory objects: `shm_open("/key")` opens
/// `/dev/shm/key`.
const SHM_DIR: &str = "/dev/shm";

/// A region as the client registered it: the part
/// `[offset, offset + byte_size)` of the shared memory object `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionStatus {
    pub name: String,
    pub key: String,
    pub offset: u64,
    pub byte_size: u64,
}

/// An open shared memory object, shared by every region registered on it
/// (so that registering one object many times holds one descriptor).
#[derive(Debug)]
pub(crate) struct SharedObject {
    file: File,
    /// Device and inode: which object this is.
    pub id: (u64, u64),
}

impl SharedObject {
    /// Opens the object `key` read and write. Like glibc's `shm_open`, a
    /// symbolic link is refused rather than followed, and so is anything
    /// that is not a regular file. Errors are Triton's internal error (500).
    pub fn open(key: &str) -> Result<Self> {
        let cannot = |why: String| {
            Error::internal(format!(
                "Unable to open shared memory region: '{key}' ({why})"
            ))
        };
        let path = object_path(key)
            .ok_or_else(|| cannot("not a shared memory object name".to_string()))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => cannot(format!(
                    "{} is a symbolic link, which shared memory objects cannot be",
                    path.display()
                )),
                _ => cannot(format!("{}: {e}", path.display())),
            })?;
        let metadata = file.metadata().map_err(|e| cannot(e.to_string()))?;
        if !metadata.is_file() {
            return Err(cannot(format!("{} is not a regular file", path.display())));
        }
        Ok(Self {
            file,
            id: (metadata.dev(), metadata.ino()),
        })
    }

    /// The object's size now (0 if it cannot be read).
    fn size(&self) -> u64 {
        self.file.metadata().map_or(0, |m| m.len())
    }
}

/// A registered region. Reads and writes go through the object's file
/// descriptor (`pread`/`pwrite`), never through a mapping: a client that
/// shrinks its object while a request copies from it then makes that copy
/// fail with an error instead of killing the server with SIGBUS, and no
/// reference into memory other processes write is ever handed out.
#[derive(Debug)]
pub(crate) struct Region {
    pub status: RegionStatus,
    object: Arc<SharedObject>,
    /// How many [`RegionLease`]s there are: requests that use the region.
    leases: AtomicUsize,
}

impl Region {
    /// The region `status` describes, of the opened `object`. A part beyond
    /// the object's end or an empty region is an invalid argument (400).
    pub fn new(status: RegionStatus, object: Arc<SharedObject>) -> Result<Self> {
        let name = &status.name;
        if status.byte_size == 0 {
            return Err(Error::invalid_arg(format!(
                "failed to register shared memory region '{name}': invalid args (byte_size must \
                 be greater than 0)"
            )));
        }
        let object_size = object.size();
        let end = status.offset.checked_add(status.byte_size);
        if end.is_none_or(|end| end > object_size) {
            return Err(Error::invalid_arg(format!(
                "failed to register shared memory region '{name}': invalid args (offset {} + \
                 byte_size {} is beyond the {object_size} bytes of shared memory object '{}')",
                status.offset, status.byte_size, status.key
            )));
        }
        Ok(Self {
            status,
            object,
            leases: AtomicUsize::new(0),
        })
    }

    /// Whether a request uses the region now (holds a [`RegionLease`]).
    pub fn in_use(&self) -> bool {
        self.leases.load(Ordering::SeqCst) > 0
    }

    /// Whether `self` and `other` are parts of one open object.
    #[cfg(test)]
    pub fn same_object(&self, other: &Region) -> bool {
        Arc::ptr_eq(&self.object, &other.object)
    }

    /// Checks that `[offset, offset + byte_size)` lies in the region, for the
    /// tensor `tensor` (e.g. "input 'INPUT0'"), with Triton's messages and
    /// the numbers that explain them.
    pub fn check_span(&self, tensor: &str, offset: u64, byte_size: u64) -> Result<()> {
        let name = &self.status.name;
        let size = self.status.byte_size;
        if offset >= size {
            return Err(Error::invalid_arg(format!(
                "Invalid offset for shared memory region: '{name}' ({tensor}: offset {offset} is \
                 not below the region's {size} bytes)"
            )));
        }
        let why = if byte_size == 0 {
            "its shared_memory_byte_size is 0 or missing".to_string()
        } else if offset.saturating_add(byte_size) > size {
            format!(
                "offset {offset} + byte size {byte_size} does not fit the region's {size} bytes"
            )
        } else {
            return Ok(());
        };
        Err(Error::invalid_arg(format!(
            "Invalid offset + byte size for shared memory region: '{name}' ({tensor}: {why})"
        )))
    }

    /// A copy of `byte_size` bytes at `offset`; the span was checked with
    /// [`Region::check_span`].
    pub fn read(&self, offset: u64, byte_size: u64) -> Result<Bytes> {
        let at = self.object_offset(offset, byte_size);
        let len = usize::try_from(byte_size).map_err(|_| self.too_large(byte_size))?;
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .map_err(|_| self.too_large(byte_size))?;
        data.resize(len, 0);
        self.object
            .file
            .read_exact_at(&mut data, at)
            .map_err(|e| self.unbacked(&e))?;
        Ok(Bytes::from(data))
    }

    /// Writes `data` at `offset`; `offset + data.len()` must fit the span the
    /// caller checked with [`Region::check_span`]. A write never grows the
    /// object: one that shrank under the region is an error.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let at = self.object_offset(offset, data.len() as u64);
        let size = self.object.size();
        if at + data.len() as u64 > size {
            return Err(self.unbacked(&std::io::Error::from(std::io::ErrorKind::UnexpectedEof)));
        }
        self.object
            .file
            .write_all_at(data, at)
            .map_err(|e| self.unbacked(&e))
    }

    /// Where `offset` of the region is in its object, panicking if the span
    /// is outside the region (a bug: every caller checks the span first).
    fn object_offset(&self, offset: u64, byte_size: u64) -> u64 {
        assert!(
            offset
                .checked_add(byte_size)
                .is_some_and(|end| end <= self.status.byte_size),
            "shared memory span checked before use"
        );
        self.status.offset + offset
    }

    fn unbacked(&self, e: &std::io::Error) -> Error {
        Error::internal(format!(
            "shared memory region '{}' is no longer backed: its object '{}' is {} bytes now ({e})",
            self.status.name,
            self.status.key,
            self.object.size()
        ))
    }

    fn too_large(&self, byte_size: u64) -> Error {
        Error::new(
            ErrorKind::ResourceExhausted,
            format!(
                "cannot read {byte_size} bytes from shared memory region '{}'",
                self.status.name
            ),
        )
    }
}

/// A request's use of a region, from the moment it names the region until
/// its final response: inputs are read and outputs written through it, and
/// while any lease on a region is held, unregistering the region is refused
/// (as Triton refuses it while a request holds the region's mapping). The
/// registry makes leases only under its lock, so an unregistration that saw
/// none cannot race a new one.
#[derive(Debug)]
pub(crate) struct RegionLease(Arc<Region>);

impl RegionLease {
    /// A lease on `region`, which the caller found registered.
    pub fn new(region: &Arc<Region>) -> Self {
        region.leases.fetch_add(1, Ordering::SeqCst);
        Self(region.clone())
    }
}

impl Clone for RegionLease {
    fn clone(&self) -> Self {
        Self::new(&self.0)
    }
}

impl Drop for RegionLease {
    fn drop(&mut self) {
        self.0.leases.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Deref for RegionLease {
    type Target = Region;

    fn deref(&self) -> &Region {
        &self.0
    }
}

/// The file of the shared memory object `key`: leading slashes dropped, and
/// like glibc's `shm_open`, no other slash (nor "." or "..") allowed, so
/// that a key never names a file outside `/dev/shm`.
fn object_path(key: &str) -> Option<PathBuf> {
    let name = key.trim_start_matches('/');
    if name.is_empty() || name.contains(['/', '\0']) || name == "." || name == ".." {
        return None;
    }
    Some(PathBuf::from(SHM_DIR).join(name))
}
