//! `TRITONBACKEND_Response` and `TRITONBACKEND_Output`: a response the
//! backend builds, owned by it until it sends or deletes it, and the
//! outputs it adds, whose buffers become the response's tensors without a
//! copy.

use std::sync::Arc;

use bytes::Bytes;
use oxiserve_backend::BackendResponse;
use oxiserve_types::{DataType, Parameters, Tensor};

use crate::{buffer::BufferAttributesHandle, ffi::c_string, sink::SharedSink};

/// The object behind a `TRITONBACKEND_Output*`, owned by its response.
#[derive(Debug)]
pub struct OutputHandle {
    pub name: std::ffi::CString,
    pub dtype: DataType,
    pub shape: Vec<i64>,
    /// Allocated by `TRITONBACKEND_OutputBuffer`.
    pub buffer: Option<Vec<u8>>,
    pub attributes: BufferAttributesHandle,
}

impl OutputHandle {
    fn tensor(self) -> Tensor {
        Tensor::new(
            self.name.to_string_lossy(),
            self.dtype,
            self.shape,
            self.buffer.map(Bytes::from).unwrap_or_default(),
        )
    }
}

/// The object behind a `TRITONBACKEND_Response*`.
#[derive(Debug)]
pub struct ResponseHandle {
    pub sink: Arc<SharedSink>,
    #[expect(
        clippy::vec_box,
        reason = "the backend holds each output's address while more are added"
    )]
    pub outputs: Vec<Box<OutputHandle>>,
    pub parameters: Parameters,
}

impl ResponseHandle {
    /// A response to the request whose sink is `sink`.
    pub fn new(sink: Arc<SharedSink>) -> Self {
        Self {
            sink,
            outputs: Vec::new(),
            parameters: Parameters::new(),
        }
    }

    /// Adds an output; the backend allocates its buffer next.
    pub fn add_output(&mut self, name: &str, dtype: DataType, shape: Vec<i64>) -> &OutputHandle {
        self.outputs.push(Box::new(OutputHandle {
            name: c_string(name),
            dtype,
            shape,
            buffer: None,
            attributes: BufferAttributesHandle::default(),
        }));
        self.outputs.last().expect("just pushed")
    }

    /// The response the sink sends.
    pub fn into_response(self) -> BackendResponse {
        BackendResponse {
            outputs: self.outputs.into_iter().map(|o| o.tensor()).collect(),
            parameters: self.parameters,
        }
    }
}
