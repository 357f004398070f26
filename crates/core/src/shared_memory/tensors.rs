//! Request tensors in shared memory: inputs read from a region before
//! validation, outputs written into a region when the response comes. The
//! request holds a lease on every region it names, inputs' included, until
//! its final response (Triton holds their mappings as long), so that none is
//! unregistered while the request runs.
//!
//! A tensor names its region with these parameters (as every protocol
//! carries them): `shared_memory_region` (string), `shared_memory_byte_size`
//! and `shared_memory_offset` (non-negative integers; the offset defaults
//! to 0).

use bytes::Bytes;
use oxiserve_types::{Error, InferRequest, Parameters, Result, Tensor};

use super::{RegionLease, SharedMemoryRegistry};

const REGION: &str = "shared_memory_region";
const BYTE_SIZE: &str = "shared_memory_byte_size";
const OFFSET: &str = "shared_memory_offset";

/// A region one request names, held (in use) as long as this lives, which
/// is until the request's final response: where one requested output goes,
/// or a region an input was read from.
#[derive(Debug, Clone)]
pub(crate) struct OutputRegion {
    region: RegionLease,
    /// The output written into the region; `None` for an input's region.
    output: Option<OutputSpan>,
}

/// Where in its region one requested output goes: a checked span.
#[derive(Debug, Clone)]
struct OutputSpan {
    /// The output's name.
    name: String,
    offset: u64,
    byte_size: u64,
    /// The output's shared memory parameters, passed on with the response.
    parameters: Parameters,
}

impl OutputRegion {
    /// The name of the output this region receives; `None` for a region an
    /// input was read from (held only so that it stays in use).
    pub fn output_name(&self) -> Option<&str> {
        self.output.as_ref().map(|o| o.name.as_str())
    }

    /// Writes `output`'s data into the region, then leaves the tensor
    /// without data and with the shared memory parameters, so that
    /// frontends send it without data. A span too small for the data is
    /// Triton's internal error. On an input's region, writes nothing.
    pub fn write(&self, output: &mut Tensor) -> Result<()> {
        let Some(span) = &self.output else {
            return Ok(());
        };
        let size = output.data.len() as u64;
        if size > span.byte_size {
            return Err(Error::internal(format!(
                "shared memory size specified with the request for output '{}' ({} bytes) should \
                 be at least {size} bytes to hold the results",
                span.name, span.byte_size
            )));
        }
        self.region.write(span.offset, &output.data)?;
        output.data = Bytes::new();
        output.parameters = span.parameters.clone();
        Ok(())
    }
}

impl SharedMemoryRegistry {
    /// Reads every input that names a region from it (one copy: the bytes
    /// must not change under validation and the backend, and the client
    /// may write the region at any time), dropping its shared memory
    /// parameters; returns where each output that names a region goes,
    /// and the inputs' regions, all leased until the returned values drop.
    /// Unknown regions are `NotFound`; spans outside their region,
    /// malformed parameters and shared memory outputs that also ask for
    /// classification are `InvalidArg`.
    pub(crate) fn resolve(&self, request: &mut InferRequest) -> Result<Vec<OutputRegion>> {
        let mut regions = Vec::new();
        for input in &mut request.inputs {
            let tensor = format!("input '{}'", input.name);
            let Some(span) = self.span(&input.parameters, &tensor)? else {
                continue;
            };
            input.data = span.region.read(span.offset, span.byte_size)?;
            for key in [REGION, BYTE_SIZE, OFFSET] {
                input.parameters.remove(key);
            }
            regions.push(OutputRegion {
                region: span.region,
                output: None,
            });
        }
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
            regions.push(OutputRegion {
                region: span.region,
                output: Some(OutputSpan {
                    name: output.name.clone(),
                    offset: span.offset,
                    byte_size: span.byte_size,
                    parameters,
                }),
            });
        }
        Ok(regions)
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
        let region = self.lease(name)?;
        region.check_span(tensor, offset, byte_size)?;
        Ok(Some(Span {
            region,
            offset,
            byte_size,
        }))
    }
}

struct Span {
    region: RegionLease,
    offset: u64,
    byte_size: u64,
}
