//! Requested outputs: which outputs come back, and how.

use oxiserve_types::{ParameterValue, Parameters};

use crate::shm::shared_memory_parameters;

/// One output an inference request asks for (tritonclient's
/// `InferRequestedOutput`). A request that names none gets them all.
#[derive(Debug, Clone, PartialEq)]
pub struct InferRequestedOutput {
    name: String,
    parameters: Parameters,
    binary: bool,
}

impl InferRequestedOutput {
    /// The output called `name`, as binary tensor data over HTTP.
    pub fn new(name: &str) -> Self {
        InferRequestedOutput {
            name: name.into(),
            parameters: Parameters::new(),
            binary: true,
        }
    }

    /// Over HTTP, whether the output comes as binary tensor data (the
    /// default) or as a JSON `data` array. gRPC always answers raw.
    pub fn binary_data(mut self, binary: bool) -> Self {
        self.binary = binary;
        self
    }

    /// The top `count` classes instead of the tensor (Triton's
    /// classification extension: BYTES elements `value:index[:label]`).
    pub fn class_count(self, count: u32) -> Self {
        self.with_parameter("classification", ParameterValue::Int(count.into()))
    }

    /// The output written by the server into `region` at `offset` (at most
    /// `byte_size` bytes) instead of sent back; read it with
    /// [`SystemSharedMemoryRegion::read_output`] at the same offset.
    ///
    /// [`SystemSharedMemoryRegion::read_output`]: crate::shm::SystemSharedMemoryRegion::read_output
    pub fn with_shared_memory(mut self, region: &str, byte_size: u64, offset: u64) -> Self {
        self.parameters
            .extend(shared_memory_parameters(region, byte_size, offset));
        self
    }

    /// This output with a tensor parameter.
    pub fn with_parameter(mut self, key: &str, value: ParameterValue) -> Self {
        self.parameters.insert(key.into(), value);
        self
    }

    /// The output's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its parameters (classification, shared memory).
    pub fn parameters(&self) -> &Parameters {
        &self.parameters
    }

    /// Whether it comes as binary tensor data over HTTP (never for a shared
    /// memory output).
    pub fn is_binary(&self) -> bool {
        self.binary && !self.parameters.contains_key("shared_memory_region")
    }
}
