//! Request tensors in shared memory: inputs read from a region before
//! validation, outputs written into a region when the response comes.
//!
//! A tensor names its region with these parameters (as every protocol
//! carries them): `shared_memory_region` (string), `shared_memory_byte_size`
//! and `shared_memory_offset` (non-negative integers; the offset defaults
//! to 0).

use std::sync::Arc;

use bytes::Bytes;
use oxiserve_types::{Error, InferRequest, Parameters, Result, Tensor};

use super::{Region, SharedMemoryRegistry};

const REGION: &str = "shared_memory_region";
const BYTE_SIZE: &str = "shared_memory_byte_size";
const OFFSET: &str = "shared_memory_offset";

/// Where one requested output goes: a checked span of a region.
#[derive(Debug, Clone)]
pub(crate) struct OutputRegion {
    /// The output's name.
    pub name: String,
    region: Arc<Region>,
    offset: u64,
    byte_size: u64,
    /// The output's shared memory parameters, passed on with the response.
    parameters: Parameters,
}

impl OutputRegion {
    /// Writes `output`'s data into the region, then leaves the tensor
    /// without data and with the shared memory parameters, so that
    /// frontends send it without data. A span too small for the data is
    /// Triton's internal error.
    pub fn write(&self, output: &mut Tensor) -> Result<()> {
        let size = output.data.len() as u64;
        if size > self.byte_size {
            return Err(Error::internal(format!(
                "shared memory size specified with the request for output '{}' ({} bytes) should \
                 be at least {size} bytes to hold the results",
                self.name, self.byte_size
            )));
        }
        self.region.write(self.offset, &output.data)?;
        output.data = Bytes::new();
        output.parameters = self.parameters.clone();
        Ok(())
    }
}

impl SharedMemoryRegistry {
    /// Reads every input that names a region from it (one copy: the bytes
    /// must not change under validation and the backend, and the client
    /// may write the region at any time), dropping its shared memory
    /// parameters; returns where each output that names a region goes.
    /// Unknown regions are `NotFound`; spans outside their region,
    /// malformed parameters and shared memory outputs that also ask for
    /// classification are `InvalidArg`.
    pub(crate) fn resolve(&self, request: &mut InferRequest) -> Result<Vec<OutputRegion>> {
        for input in &mut request.inputs {
            let tensor = format!("input '{}'", input.name);
            let Some(span) = self.span(&input.parameters, &tensor)? else {
                continue;
            };
            input.data = span.region.read(span.offset, span.byte_size)?;
            for key in [REGION, BYTE_SIZE, OFFSET] {
                input.parameters.remove(key);
            }
        }
        let mut outputs = Vec::new();
        for output in &request.outputs {
            let tensor = format!("output '{}'", output.name);
            let Some(span) = self.span(&output.parameters, &tensor)? else {
                continue;
            };
            if output.class_count > 0 {
                return Err(Error::invalid_arg(
                    "Output can't set both 'shared_memory_region' and 'classification'",
                ));
            }
            let parameters = output
                .parameters
                .iter()
                .filter(|(key, _)| [REGION, BYTE_SIZE, OFFSET].contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            outputs.push(OutputRegion {
                name: output.name.clone(),
                region: span.region,
                offset: span.offset,
                byte_size: span.byte_size,
                parameters,
            });
        }
        Ok(outputs)
    }

    /// The checked span `parameters` name, if they name a region.
    fn span(&self, parameters: &Parameters, tensor: &str) -> Result<Option<Span>> {
        let Some(name) = parameters.get(REGION) else {
            return Ok(None);
        };
        let name = name.as_str().ok_or_else(|| {
            Error::invalid_arg(format!("'{REGION}' of {tensor} must be a string"))
        })?;
        let number = |key: &str| match parameters.get(key) {
            None => Ok(0),
            Some(value) => value.as_u64().ok_or_else(|| {
                Error::invalid_arg(format!(
                    "'{key}' of {tensor} must be a non-negative integer"
                ))
            }),
        };
        let byte_size = number(BYTE_SIZE)?;
        let offset = number(OFFSET)?;
        let region = self.get(name)?;
        region.check_span(tensor, offset, byte_size)?;
        Ok(Some(Span {
            region,
            offset,
            byte_size,
        }))
    }
}

struct Span {
    region: Arc<Region>,
    offset: u64,
    byte_size: u64,
}
