//! A batch of requests as ONNX Runtime input tensors: each input's requests
//! are laid end to end in one tensor, the one copy ONNX Runtime needs.

use std::borrow::Cow;

use ort::{
    memory::Allocator,
    session::SessionInputValue,
    value::{DynTensor, Tensor},
};
use oxiserve_backend::BackendRequest;
use oxiserve_types::{DataType, Error, Result, bytes_elements, element_count};

use crate::dtype;

/// The session inputs for `requests`, all of which carry `names`, with equal
/// shapes beyond the batch dimension when `batching`.
pub(crate) fn gather<'a>(
    allocator: &Allocator,
    names: &'a [String],
    requests: &[BackendRequest],
    batching: bool,
) -> Result<Vec<(Cow<'a, str>, SessionInputValue<'static>)>> {
    names
        .iter()
        .map(|name| {
            let parts: Vec<_> = requests
                .iter()
                .map(|r| {
                    r.input(name)
                        .expect("grouped requests carry the same inputs")
                })
                .collect();
            let first = parts[0];
            let mut shape = first.shape.clone();
            if batching {
                shape[0] = parts.iter().map(|t| t.shape[0]).sum();
            }
            let value = if first.datatype == DataType::Bytes {
                strings(name, &parts, &shape)?
            } else {
                let mut tensor =
                    DynTensor::new(allocator, dtype::to_onnx(first.datatype), shape.clone())
                        .map_err(|e| {
                            Error::internal(format!("onnxruntime: input '{name}': {e}"))
                        })?;
                let len =
                    element_count(&shape).unwrap_or(0) * first.datatype.element_size().unwrap_or(0);
                // SAFETY: ONNX Runtime allocated `len` bytes for this tensor
                // (its element count times the element size), and nothing
                // else refers to them yet.
                let target = unsafe {
                    std::slice::from_raw_parts_mut(tensor.data_ptr_mut().cast::<u8>(), len)
                };
                let mut at = 0;
                for part in &parts {
                    target[at..at + part.data.len()].copy_from_slice(&part.data);
                    at += part.data.len();
                }
                if at != len {
                    return Err(Error::invalid_arg(format!(
                        "input '{name}' holds {at} bytes, its shape needs {len}"
                    )));
                }
                tensor
            };
            Ok((Cow::Borrowed(name.as_str()), value.into()))
        })
        .collect()
}

/// A string tensor from BYTES inputs; ONNX Runtime takes UTF-8 text without
/// NUL characters.
fn strings(name: &str, parts: &[&oxiserve_types::Tensor], shape: &[i64]) -> Result<DynTensor> {
    let mut texts = Vec::with_capacity(element_count(shape).unwrap_or(0));
    for part in parts {
        let count = element_count(&part.shape).unwrap_or(0);
        for element in bytes_elements(name, &part.data, count)? {
            let text = std::str::from_utf8(element).map_err(|_| {
                Error::invalid_arg(format!(
                    "input '{name}': element {} is not UTF-8 text, which ONNX Runtime string tensors need",
                    texts.len()
                ))
            })?;
            texts.push(text.to_owned());
        }
    }
    Tensor::from_string_array((shape.to_vec(), &texts[..]))
        .map(Tensor::upcast)
        .map_err(|e| Error::invalid_arg(format!("input '{name}': {e}")))
}
