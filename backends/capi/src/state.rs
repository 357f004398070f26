//! `TRITONBACKEND_State`: a new value of an implicit state
//! (`sequence_batching.state`), which the next request of the sequence
//! receives as its state input. Owned by its request.

use std::sync::Arc;

use bytes::Bytes;
use oxiserve_types::{DataType, Tensor};

use crate::{buffer::BufferAttributesHandle, sink::SharedSink};

/// The object behind a `TRITONBACKEND_State*`.
#[derive(Debug)]
pub struct StateHandle {
    /// The state's output name.
    pub name: String,
    pub dtype: DataType,
    pub shape: Vec<i64>,
    pub buffer: Vec<u8>,
    pub attributes: BufferAttributesHandle,
    /// Where its value goes on `TRITONBACKEND_StateUpdate`.
    pub sink: Arc<SharedSink>,
}

impl StateHandle {
    /// The state's value now, as the output its request's response carries.
    pub fn tensor(&self) -> Tensor {
        Tensor::new(
            &self.name,
            self.dtype,
            self.shape.clone(),
            Bytes::copy_from_slice(&self.buffer),
        )
    }
}
