//! A batch's output tensors handed back to each request: fixed-size outputs
//! are sliced from ONNX Runtime's own buffer without a copy; strings are
//! encoded in Triton's BYTES layout.

use bytes::Bytes;
use ort::value::{DynTensor, DynTensorValueType, DynValue, TensorElementType, ValueType};
use oxiserve_backend::BatchOutput;
use oxiserve_types::{Error, Result, element_count};

use crate::dtype;

/// An ONNX Runtime tensor owning the bytes a `Bytes` points into.
struct OrtBuffer {
    tensor: DynTensor,
    len: usize,
}

impl AsRef<[u8]> for OrtBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the tensor owns `len` bytes at `data_ptr` (element count
        // times element size) for as long as it lives, and is never written
        // to again.
        unsafe { std::slice::from_raw_parts(self.tensor.data_ptr().cast::<u8>(), self.len) }
    }
}

/// Takes the output `name` from the session's result.
pub(crate) fn take(name: &str, value: DynValue) -> Result<BatchOutput> {
    let (ty, shape) = match value.dtype() {
        ValueType::Tensor { ty, shape, .. } => (*ty, shape.to_vec()),
        other => {
            return Err(Error::internal(format!(
                "onnxruntime: output '{name}' is a {other}, not a tensor"
            )));
        }
    };
    let dtype = dtype::from_onnx(ty).ok_or_else(|| {
        Error::internal(format!(
            "onnxruntime: output '{name}' has element type {ty}, which Triton has no datatype for"
        ))
    })?;
    let count = element_count(&shape).unwrap_or(0);
    let fail = |e: ort::Error| Error::internal(format!("onnxruntime: output '{name}': {e}"));
    if ty == TensorElementType::String {
        let (_, texts) = value.try_extract_strings().map_err(fail)?;
        return Ok(BatchOutput::strings(name, shape, &texts));
    }
    let tensor = value.downcast::<DynTensorValueType>().map_err(fail)?;
    let len = count * dtype.element_size().unwrap_or(0);
    let data = Bytes::from_owner(OrtBuffer { tensor, len });
    Ok(BatchOutput::new(name, dtype, shape, data))
}
