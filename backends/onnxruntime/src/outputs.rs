//! A batch's output tensors handed back to each request: fixed-size outputs
//! are sliced from ONNX Runtime's own buffer without a copy; strings are
//! encoded in Triton's BYTES layout.

use bytes::Bytes;
use ort::value::{DynTensor, DynTensorValueType, DynValue, TensorElementType, ValueType};
use oxiserve_types::{Error, Result, Tensor, element_count, encode_bytes_elements};

use crate::dtype;

/// One output of a batch, ready to be split between its requests.
pub(crate) struct BatchOutput {
    name: String,
    dtype: oxiserve_types::DataType,
    shape: Vec<i64>,
    data: Bytes,
    /// Byte offset of each string element's encoding (strings only).
    string_offsets: Option<Vec<usize>>,
}

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

impl BatchOutput {
    /// Takes the output `name` from the session's result.
    pub(crate) fn new(name: &str, value: DynValue) -> Result<Self> {
        let (ty, shape) = match value.dtype() {
            ValueType::Tensor { ty, shape, .. } => (*ty, shape.to_vec()),
            other => {
                return Err(Error::internal(format!(
                    "onnxruntime: output '{name}' is a {other}, not a tensor"
                )));
            }
        };
        let dtype = dtype::from_onnx(ty).ok_or_else(|| {
            Error::internal(format!("onnxruntime: output '{name}' has element type {ty}, which Triton has no datatype for"))
        })?;
        let count = element_count(&shape).unwrap_or(0);
        let fail = |e: ort::Error| Error::internal(format!("onnxruntime: output '{name}': {e}"));
        let (data, string_offsets) = if ty == TensorElementType::String {
            let (_, texts) = value.try_extract_strings().map_err(fail)?;
            let mut offsets = Vec::with_capacity(texts.len() + 1);
            let mut at = 0;
            for text in &texts {
                offsets.push(at);
                at += 4 + text.len();
            }
            offsets.push(at);
            (encode_bytes_elements(&texts), Some(offsets))
        } else {
            let tensor = value.downcast::<DynTensorValueType>().map_err(fail)?;
            let len = count * dtype.element_size().unwrap_or(0);
            (Bytes::from_owner(OrtBuffer { tensor, len }), None)
        };
        Ok(Self {
            name: name.to_string(),
            dtype,
            shape,
            data,
            string_offsets,
        })
    }

    /// The output's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The part of the output for rows `start..start + rows` of the batch, or
    /// the whole output when `rows` is `None` (a model that doesn't batch).
    pub(crate) fn rows(&self, start: usize, rows: Option<usize>) -> Result<Tensor> {
        let Some(rows) = rows else {
            return Ok(Tensor::new(
                &self.name,
                self.dtype,
                self.shape.clone(),
                self.data.clone(),
            ));
        };
        let total = self.shape.first().copied().unwrap_or(0).max(0) as usize;
        if start + rows > total {
            return Err(Error::internal(format!(
                "onnxruntime: output '{}' has {total} rows for a batch of at least {}",
                self.name,
                start + rows
            )));
        }
        let per_row = element_count(&self.shape[1..]).unwrap_or(0);
        let (from, to) = match &self.string_offsets {
            Some(offsets) => (offsets[start * per_row], offsets[(start + rows) * per_row]),
            None => {
                let row_bytes = per_row * self.dtype.element_size().unwrap_or(0);
                (start * row_bytes, (start + rows) * row_bytes)
            }
        };
        let mut shape = self.shape.clone();
        shape[0] = rows as i64;
        Ok(Tensor::new(
            &self.name,
            self.dtype,
            shape,
            self.data.slice(from..to),
        ))
    }
}
