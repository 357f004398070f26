//! System shared memory: a POSIX shared memory object (`shm_open`) that
//! inputs are written into and outputs read from, so that requests carry
//! region names instead of data.
//!
//! ```no_run
//! # async fn f() -> oxiserve_client::Result<()> {
//! use oxiserve_client::{HttpClient, InferInput, InferRequest, InferRequestedOutput};
//! use oxiserve_client::shm::SystemSharedMemoryRegion;
//!
//! let client = HttpClient::new("localhost:8000")?;
//! let region = SystemSharedMemoryRegion::create("io", "/io_region", 128)?;
//! client.register_system_shared_memory(region.name(), region.key(), region.byte_size(), 0).await?;
//! let input = InferInput::from_array("INPUT0", &ndarray::arr1(&[1.0_f32, 2.0]));
//! region.write(0, input.data())?;
//! let request = InferRequest::new("identity")
//!     .input(input.with_shared_memory(region.name(), 0))
//!     .output(InferRequestedOutput::new("OUTPUT0").with_shared_memory(region.name(), 64, 64));
//! let mut result = client.infer(&request).await?;
//! region.read_output(&mut result, "OUTPUT0", 64)?;
//! println!("{}", result.as_array::<f32>("OUTPUT0")?);
//! client.unregister_system_shared_memory(region.name()).await?;
//! # Ok(()) }
//! ```

use std::{fs::File, os::unix::fs::FileExt};

use bytes::Bytes;
use oxiserve_types::{ParameterValue, Parameters};
use rustix::{fs::Mode, shm};

use crate::{
    error::{Error, Result},
    result::InferResult,
};

/// A POSIX shared memory object, to be registered with the server as a
/// system shared memory region. The object is removed when this drops.
#[derive(Debug)]
pub struct SystemSharedMemoryRegion {
    name: String,
    key: String,
    byte_size: u64,
    file: File,
}

impl SystemSharedMemoryRegion {
    /// Opens (or creates) the shared memory object `key` (`/name`, as
    /// `shm_open` takes it) and sizes it to `byte_size` bytes, for
    /// registration as the region `name`.
    pub fn create(name: &str, key: &str, byte_size: u64) -> Result<Self> {
        let io = |source| Error::SharedMemory {
            key: key.into(),
            source,
        };
        let flags = shm::OFlags::CREATE | shm::OFlags::RDWR;
        let fd = shm::open(key, flags, Mode::RUSR | Mode::WUSR).map_err(|e| io(e.into()))?;
        rustix::fs::ftruncate(&fd, byte_size).map_err(|e| io(e.into()))?;
        Ok(SystemSharedMemoryRegion {
            name: name.into(),
            key: key.into(),
            byte_size,
            file: File::from(fd),
        })
    }

    /// The region's name on the server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `shm_open` key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The object's size in bytes.
    pub fn byte_size(&self) -> u64 {
        self.byte_size
    }

    /// Writes `data` at `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_span(offset, data.len() as u64)?;
        self.file
            .write_all_at(data, offset)
            .map_err(|source| self.io(source))
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.check_span(offset, len)?;
        let mut data = vec![0; len as usize];
        self.file
            .read_exact_at(&mut data, offset)
            .map_err(|source| self.io(source))?;
        Ok(data)
    }

    /// Reads the data of `output`, which the server wrote into this region
    /// at `offset` (where the request asked), into `result`, whose typed
    /// readers ([`InferResult::as_array`]) then see it. Its size follows
    /// from the output's datatype and shape.
    pub fn read_output(&self, result: &mut InferResult, output: &str, offset: u64) -> Result<()> {
        let tensor = result.output_mut(output)?;
        let count = oxiserve_types::element_count(&tensor.shape)
            .ok_or_else(|| Error::protocol(format!("output '{output}' has a bad shape")))?;
        let data = match tensor.datatype.element_size() {
            Some(size) => self.read(offset, (count * size) as u64)?,
            None => {
                let mut data = self.read(offset, self.byte_size.saturating_sub(offset))?;
                let length = bytes_length(&data, count).ok_or_else(|| {
                    Error::protocol(format!("output '{output}' overruns region '{}'", self.name))
                })?;
                data.truncate(length);
                data
            }
        };
        tensor.data = Bytes::from(data);
        Ok(())
    }

    fn check_span(&self, offset: u64, len: u64) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.byte_size => Ok(()),
            _ => Err(Error::invalid_arg(format!(
                "{len} bytes at offset {offset} do not fit region '{}' of {} bytes",
                self.name, self.byte_size
            ))),
        }
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::SharedMemory {
            key: self.key.clone(),
            source,
        }
    }
}

impl Drop for SystemSharedMemoryRegion {
    fn drop(&mut self) {
        let _ = shm::unlink(&self.key);
    }
}

/// The tensor parameters that put a tensor in a region's span.
pub(crate) fn shared_memory_parameters(region: &str, byte_size: u64, offset: u64) -> Parameters {
    let int = |v: u64| ParameterValue::Int(i64::try_from(v).unwrap_or(i64::MAX));
    Parameters::from([
        (
            "shared_memory_region".into(),
            ParameterValue::String(region.into()),
        ),
        ("shared_memory_byte_size".into(), int(byte_size)),
        ("shared_memory_offset".into(), int(offset)),
    ])
}

/// The length of the first `count` BYTES elements (4-byte length, bytes) of
/// `data`; `None` if they do not fit.
fn bytes_length(data: &[u8], count: usize) -> Option<usize> {
    let mut at = 0usize;
    for _ in 0..count {
        let len = data.get(at..at + 4)?;
        at += 4 + u32::from_le_bytes(len.try_into().ok()?) as usize;
    }
    (at <= data.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use oxiserve_types::{DataType, Tensor, encode_bytes_elements};

    use super::*;

    fn key(what: &str) -> String {
        format!("/oxiserve_client_test_{}_{what}", std::process::id())
    }

    #[test]
    fn regions_hold_data_and_go_away() {
        let key = key("plain");
        let region = SystemSharedMemoryRegion::create("r", &key, 16).unwrap();
        region.write(4, &[1, 2, 3]).unwrap();
        assert_eq!(region.read(3, 5).unwrap(), [0, 1, 2, 3, 0]);
        assert!(region.write(15, &[1, 2]).is_err());
        let path = format!("/dev/shm{key}");
        assert!(std::path::Path::new(&path).exists());
        drop(region);
        assert!(!std::path::Path::new(&path).exists());
    }

    #[test]
    fn outputs_are_read_at_their_offset() {
        let region = SystemSharedMemoryRegion::create("r", &key("outputs"), 64).unwrap();
        region
            .write(8, &encode_bytes_elements(["ab", "c"]))
            .unwrap();
        region.write(32, &[7, 0, 0, 0]).unwrap();
        let output = |name: &str, datatype, shape| Tensor::new(name, datatype, shape, Bytes::new());
        let mut result = InferResult {
            outputs: vec![
                output("S", DataType::Bytes, vec![2]),
                output("I", DataType::Int32, vec![1]),
            ],
            ..InferResult::default()
        };
        region.read_output(&mut result, "S", 8).unwrap();
        region.read_output(&mut result, "I", 32).unwrap();
        let strings = result.as_strings("S").unwrap();
        assert_eq!(strings.into_iter().collect::<Vec<_>>(), ["ab", "c"]);
        let numbers = result.as_array::<i32>("I").unwrap();
        assert_eq!(numbers.into_iter().collect::<Vec<_>>(), [7]);
        assert!(region.read_output(&mut result, "I", 62).is_err());
        assert!(region.read_output(&mut result, "S", 30).is_err());
    }
}
