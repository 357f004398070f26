//! Owned `TF_Tensor`s: a batch's inputs laid end to end in one tensor (the
//! one copy TensorFlow needs), and outputs handed back without a copy
//! (fixed-size types) or in Triton's BYTES layout (strings).

use std::ffi::c_int;

use bytes::Bytes;
use oxiserve_backend::BatchOutput;
use oxiserve_types::{DataType, Error, Result, bytes_elements, element_count};

use crate::{
    capi::{Api, TF_TString, TF_Tensor},
    dtype,
};

/// A tensor this backend owns and deletes.
pub(crate) struct Tensor {
    api: &'static Api,
    raw: *mut TF_Tensor,
    /// Strings this backend wrote, whose heap parts it frees.
    owned_strings: usize,
}

// SAFETY: a TF_Tensor is a plain buffer; it is only read once built, and
// deleted once, by whichever thread drops it.
unsafe impl Send for Tensor {}
// SAFETY: as above.
unsafe impl Sync for Tensor {}

impl Tensor {
    /// Takes ownership of a tensor TensorFlow made.
    ///
    /// # Safety
    /// `raw` is a live tensor nothing else deletes.
    pub(crate) unsafe fn from_raw(api: &'static Api, raw: *mut TF_Tensor) -> Self {
        Self {
            api,
            raw,
            owned_strings: 0,
        }
    }

    pub(crate) fn raw(&self) -> *mut TF_Tensor {
        self.raw
    }

    /// One input tensor from the parts of a batch (each request's tensor,
    /// in order), of `shape` in all.
    pub(crate) fn gather(
        api: &'static Api,
        name: &str,
        dtype: DataType,
        shape: &[i64],
        parts: &[&oxiserve_types::Tensor],
    ) -> Result<Self> {
        let count = element_count(shape).unwrap_or(0);
        if dtype == DataType::Bytes {
            return Self::strings(api, name, shape, count, parts);
        }
        let len = count * dtype.element_size().unwrap_or(0);
        let mut tensor = Self::allocate(api, name, dtype::to_tf(dtype), shape, len)?;
        let target = tensor.bytes_mut(len);
        let mut at = 0;
        for part in parts {
            let end = at + part.data.len();
            if end > len {
                break;
            }
            target[at..end].copy_from_slice(&part.data);
            at = end;
        }
        if at != len {
            return Err(Error::invalid_arg(format!(
                "input '{name}' holds {} bytes, its shape {shape:?} needs {len}",
                parts.iter().map(|p| p.data.len()).sum::<usize>()
            )));
        }
        Ok(tensor)
    }

    fn strings(
        api: &'static Api,
        name: &str,
        shape: &[i64],
        count: usize,
        parts: &[&oxiserve_types::Tensor],
    ) -> Result<Self> {
        let mut elements = Vec::with_capacity(count);
        for part in parts {
            let n = element_count(&part.shape).unwrap_or(0);
            elements.extend(bytes_elements(name, &part.data, n)?);
        }
        let size = std::mem::size_of::<TF_TString>();
        let mut tensor = Self::allocate(api, name, dtype::TF_STRING, shape, count * size)?;
        let strings = tensor.data().cast::<TF_TString>();
        for (i, element) in elements.iter().enumerate().take(count) {
            // SAFETY: the tensor holds `count` TF_TStrings; each is
            // initialized before its bytes are copied in.
            unsafe {
                (api.TF_StringInit)(strings.add(i));
                (api.TF_StringCopy)(strings.add(i), element.as_ptr().cast(), element.len());
            }
            tensor.owned_strings = i + 1;
        }
        Ok(tensor)
    }

    fn allocate(
        api: &'static Api,
        name: &str,
        tf: crate::capi::TF_DataType,
        shape: &[i64],
        len: usize,
    ) -> Result<Self> {
        // SAFETY: `shape` holds its rank of dimensions; TensorFlow
        // allocates `len` bytes, which this backend fills.
        let raw = unsafe {
            (api.TF_AllocateTensor)(
                tf,
                shape.as_ptr(),
                c_int::try_from(shape.len()).unwrap_or(c_int::MAX),
                len,
            )
        };
        if raw.is_null() {
            return Err(Error::internal(format!(
                "tensorflow: input '{name}': no tensor of shape {shape:?} could be allocated"
            )));
        }
        // SAFETY: a live tensor nothing else owns.
        Ok(unsafe { Self::from_raw(api, raw) })
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: `raw` is live.
        unsafe { (self.api.TF_TensorData)(self.raw).cast() }
    }

    fn byte_size(&self) -> usize {
        // SAFETY: `raw` is live.
        unsafe { (self.api.TF_TensorByteSize)(self.raw) }
    }

    fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        if len == 0 {
            return &mut [];
        }
        // SAFETY: TensorFlow allocated `len` bytes for this tensor, which
        // only this backend refers to while it fills them.
        unsafe { std::slice::from_raw_parts_mut(self.data(), len) }
    }

    fn shape(&self) -> Vec<i64> {
        // SAFETY: `raw` is live; indexes are below its rank.
        unsafe {
            let rank = (self.api.TF_NumDims)(self.raw);
            (0..rank).map(|i| (self.api.TF_Dim)(self.raw, i)).collect()
        }
    }

    /// This result as the output `name` of a batch.
    pub(crate) fn into_output(self, name: &str) -> Result<BatchOutput> {
        // SAFETY: `raw` is live.
        let tf = unsafe { (self.api.TF_TensorType)(self.raw) };
        let dtype = dtype::from_tf(tf).ok_or_else(|| {
            Error::internal(format!(
                "tensorflow: output '{name}' is a {} tensor, which Triton has no datatype for",
                dtype::tf_name(tf)
            ))
        })?;
        let shape = self.shape();
        let count = element_count(&shape).unwrap_or(0);
        if dtype == DataType::Bytes {
            let strings = self.data().cast::<TF_TString>().cast_const();
            let texts: Vec<&[u8]> = (0..count)
                .map(|i| {
                    // SAFETY: a string tensor of `count` elements; each
                    // element's bytes live as long as the tensor.
                    unsafe {
                        let element = strings.add(i);
                        let data = (self.api.TF_StringGetDataPointer)(element);
                        let size = (self.api.TF_StringGetSize)(element);
                        if size == 0 {
                            &[][..]
                        } else {
                            std::slice::from_raw_parts(data.cast::<u8>(), size)
                        }
                    }
                })
                .collect();
            return Ok(BatchOutput::strings(name, shape, &texts));
        }
        let len = count * dtype.element_size().unwrap_or(0);
        if len != self.byte_size() {
            return Err(Error::internal(format!(
                "tensorflow: output '{name}' holds {} bytes, its shape {shape:?} needs {len}",
                self.byte_size()
            )));
        }
        let data = Bytes::from_owner(Output { tensor: self, len });
        Ok(BatchOutput::new(name, dtype, shape, data))
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        let strings = self.data().cast::<TF_TString>();
        // SAFETY: the first `owned_strings` elements were initialized by
        // this backend (TF_DeleteTensor would not free their heap parts);
        // then the tensor is deleted once.
        unsafe {
            for i in 0..self.owned_strings {
                (self.api.TF_StringDealloc)(strings.add(i));
            }
            (self.api.TF_DeleteTensor)(self.raw);
        }
    }
}

/// A result tensor owning the bytes a `Bytes` points into.
struct Output {
    tensor: Tensor,
    len: usize,
}

impl AsRef<[u8]> for Output {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the tensor owns `len` bytes (checked against its byte
        // size) for as long as it lives, and is never written again.
        unsafe { std::slice::from_raw_parts(self.tensor.data(), self.len) }
    }
}
