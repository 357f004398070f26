//! One registered system shared memory region: a POSIX shared memory object
//! (`shm_open` name, as `tritonclient.utils.shared_memory` creates it) mapped
//! into this process, and the bounds checks on the parts requests use.

use std::{
    fs::{File, OpenOptions},
    path::PathBuf,
};

use bytes::Bytes;
use memmap2::{MmapOptions, MmapRaw};
use oxiserve_types::{Error, Result};

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

/// A mapped region. Reads and writes copy bytes with raw pointer copies and
/// never hand out references into the mapping: other processes may write it
/// at any time, which no `&[u8]` may witness.
///
/// Touching a mapped page past the end of its object raises SIGBUS, so each
/// read and write first checks that the client has not shrunk the object
/// (a client can still shrink it during the copy; Triton has no check).
#[derive(Debug)]
pub(crate) struct Region {
    pub status: RegionStatus,
    map: MmapRaw,
    /// The object, kept open to watch its size.
    file: File,
}

impl Region {
    /// Opens the shared memory object `status.key` and maps the part the
    /// region covers, read and write. Errors are Triton's: an object that
    /// cannot be opened is internal (500), a part beyond the object's end
    /// or an empty region is an invalid argument (400).
    pub fn open(status: RegionStatus) -> Result<Self> {
        let name = &status.name;
        let key = &status.key;
        let path = object_path(key).ok_or_else(|| {
            Error::internal(format!(
                "Unable to open shared memory region: '{key}' (not a shared memory object name)"
            ))
        })?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                Error::internal(format!(
                    "Unable to open shared memory region: '{key}' ({}: {e})",
                    path.display()
                ))
            })?;
        let object_size = file
            .metadata()
            .map_err(|e| {
                Error::internal(format!(
                    "Unable to open shared memory region: '{key}' ({e})"
                ))
            })?
            .len();
        if status.byte_size == 0 {
            return Err(Error::invalid_arg(format!(
                "failed to register shared memory region '{name}': invalid args (byte_size must \
                 be greater than 0)"
            )));
        }
        let end = status.offset.checked_add(status.byte_size);
        if end.is_none_or(|end| end > object_size) {
            return Err(Error::invalid_arg(format!(
                "failed to register shared memory region '{name}': invalid args (offset {} + \
                 byte_size {} is beyond the {object_size} bytes of shared memory object '{key}')",
                status.offset, status.byte_size
            )));
        }
        let len = usize::try_from(status.byte_size)
            .map_err(|_| Error::invalid_arg(format!("region '{name}' is too large to map")))?;
        let map = MmapOptions::new()
            .offset(status.offset)
            .len(len)
            .map_raw(&file)
            .map_err(|e| {
                Error::invalid_arg(format!(
                    "failed to register shared memory region '{name}': unable to map '{key}': {e}"
                ))
            })?;
        Ok(Self { status, map, file })
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
        let (start, len) = self.span(offset, byte_size)?;
        let mut data = vec![0u8; len];
        // SAFETY: `start + len` is within the mapping (checked in `span`),
        // which lives as long as `self`; `data` is a fresh heap buffer, so
        // the two do not overlap. Bytes are plain data: any value is valid.
        unsafe {
            std::ptr::copy_nonoverlapping(self.map.as_ptr().add(start), data.as_mut_ptr(), len);
        }
        Ok(Bytes::from(data))
    }

    /// Writes `data` at `offset`; `offset + data.len()` must fit the span the
    /// caller checked with [`Region::check_span`].
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let (start, len) = self.span(offset, data.len() as u64)?;
        // SAFETY: as in `read`; `data` is the process's own buffer (inputs
        // are copied out of regions), never the mapping itself.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.as_mut_ptr().add(start), len);
        }
        Ok(())
    }

    /// `(start, len)` in the mapping, panicking if the span is outside it
    /// (a bug: every caller checks the span first); an error if the object
    /// no longer covers it.
    fn span(&self, offset: u64, byte_size: u64) -> Result<(usize, usize)> {
        let end = offset
            .checked_add(byte_size)
            .filter(|&end| end <= self.map.len() as u64)
            .expect("shared memory span checked before use");
        let object_size = self.file.metadata().map(|m| m.len()).unwrap_or(0);
        if self.status.offset + end > object_size {
            return Err(Error::internal(format!(
                "shared memory region '{}' is no longer backed: its object '{}' shrank to \
                 {object_size} bytes",
                self.status.name, self.status.key
            )));
        }
        Ok((offset as usize, (end - offset) as usize))
    }
}

/// The file of the shared memory object `key`: leading slashes dropped, and
/// like glibc's `shm_open`, no other slash (nor "." or "..") allowed, so
/// that a key never names a file outside `/dev/shm`.
fn object_path(key: &str) -> Option<PathBuf> {
    let name = key.trim_start_matches('/');
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    Some(PathBuf::from(SHM_DIR).join(name))
}
