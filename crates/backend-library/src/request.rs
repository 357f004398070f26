//! A host request read into our [`InferRequest`]: its id, sequence flags,
//! parameters, inputs (copied out of the host's buffers, since the request
//! goes back to the host when execute ends) and requested outputs.

use std::ffi::{c_char, c_void};

use bytes::BytesMut;
use oxiserve_types::{
    DataType, Error, ErrorKind, InferRequest, ParameterValue, Parameters, Result, Tensor,
};

use crate::abi::{self, MEMORY_CPU, TRITONBACKEND_Request, parameter_type};
use crate::status::{check, text};

/// Reads `handle` as a request for `model_name` at `model_version`, and the
/// names of the outputs it asks for.
pub(crate) fn read(
    handle: *mut TRITONBACKEND_Request,
    model_name: &str,
    model_version: i64,
) -> Result<(InferRequest, Vec<String>)> {
    let mut id: *const c_char = std::ptr::null();
    // SAFETY: `handle` is a request of the running execute; the id lives as
    // long as the request.
    check(unsafe { abi::TRITONBACKEND_RequestId(handle, &mut id) })?;
    let request = InferRequest {
        model_name: model_name.to_string(),
        model_version: Some(model_version),
        id: text(id),
        inputs: inputs(handle)?,
        outputs: Vec::new(),
        parameters: parameters(handle)?,
    };
    Ok((request, requested_outputs(handle)?))
}

fn inputs(handle: *mut TRITONBACKEND_Request) -> Result<Vec<Tensor>> {
    let mut count = 0u32;
    // SAFETY: `handle` is live; the host writes the count.
    check(unsafe { abi::TRITONBACKEND_RequestInputCount(handle, &mut count) })?;
    (0..count).map(|index| input(handle, index)).collect()
}

fn input(handle: *mut TRITONBACKEND_Request, index: u32) -> Result<Tensor> {
    let mut input = std::ptr::null_mut();
    let mut name: *const c_char = std::ptr::null();
    let mut datatype = 0u32;
    let mut shape: *const i64 = std::ptr::null();
    let mut dims = 0u32;
    let mut byte_size = 0u64;
    let mut buffers = 0u32;
    // SAFETY: `handle` is live and `index` below its input count; the name
    // and shape live as long as the request, and are copied here.
    let (name, shape) = unsafe {
        check(abi::TRITONBACKEND_RequestInputByIndex(
            handle, index, &mut input,
        ))?;
        check(abi::TRITONBACKEND_InputProperties(
            input,
            &mut name,
            &mut datatype,
            &mut shape,
            &mut dims,
            &mut byte_size,
            &mut buffers,
        ))?;
        let shape = if shape.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(shape, dims as usize).to_vec()
        };
        (text(name), shape)
    };
    let datatype = data_type(datatype)
        .ok_or_else(|| Error::invalid_arg(format!("input '{name}' has an unknown data type")))?;
    let mut data = BytesMut::with_capacity(byte_size as usize);
    for buffer in 0..buffers {
        let mut base: *const c_void = std::ptr::null();
        let mut size = 0u64;
        let mut memory_type = MEMORY_CPU;
        let mut memory_type_id = 0i64;
        // SAFETY: `input` is live and `buffer` below its buffer count; the
        // host's buffer holds `size` bytes until the request is released,
        // and is copied here.
        unsafe {
            check(abi::TRITONBACKEND_InputBuffer(
                input,
                buffer,
                &mut base,
                &mut size,
                &mut memory_type,
                &mut memory_type_id,
            ))?;
            if memory_type > abi::MEMORY_CPU_PINNED {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("input '{name}' is in GPU memory; this backend reads CPU memory only"),
                ));
            }
            if size > 0 && !base.is_null() {
                data.extend_from_slice(std::slice::from_raw_parts(
                    base.cast::<u8>(),
                    size as usize,
                ));
            }
        }
    }
    Ok(Tensor::new(name, datatype, shape, data.freeze()))
}

fn requested_outputs(handle: *mut TRITONBACKEND_Request) -> Result<Vec<String>> {
    let mut count = 0u32;
    // SAFETY: `handle` is live; the host writes the count.
    check(unsafe { abi::TRITONBACKEND_RequestOutputCount(handle, &mut count) })?;
    (0..count)
        .map(|index| {
            let mut name: *const c_char = std::ptr::null();
            // SAFETY: `index` is below the count; the name is copied.
            check(unsafe { abi::TRITONBACKEND_RequestOutputName(handle, index, &mut name) })?;
            Ok(text(name))
        })
        .collect()
}

/// The request's parameters, and its sequence as the sequence batcher
/// hands it to built-in backends (`sequence_id`, `sequence_start`,
/// `sequence_end`).
fn parameters(handle: *mut TRITONBACKEND_Request) -> Result<Parameters> {
    let mut parameters = Parameters::new();
    let mut count = 0u32;
    // SAFETY: `handle` is live; the host writes the count.
    check(unsafe { abi::TRITONBACKEND_RequestParameterCount(handle, &mut count) })?;
    for index in 0..count {
        let mut key: *const c_char = std::ptr::null();
        let mut kind = 0u32;
        let mut value: *const c_void = std::ptr::null();
        // SAFETY: `index` is below the count; the value points at the type
        // `kind` names and lives as long as the request; both are copied.
        let value = unsafe {
            check(abi::TRITONBACKEND_RequestParameter(
                handle, index, &mut key, &mut kind, &mut value,
            ))?;
            parameter_value(kind, value)
        };
        if let Some(value) = value {
            parameters.insert(text(key), value);
        }
    }
    let mut correlation_id = 0u64;
    let mut flags = 0u32;
    // SAFETY: `handle` is live; the host writes both.
    unsafe {
        check(abi::TRITONBACKEND_RequestCorrelationId(
            handle,
            &mut correlation_id,
        ))?;
        check(abi::TRITONBACKEND_RequestFlags(handle, &mut flags))?;
    }
    if correlation_id != 0 {
        parameters
            .entry("sequence_id".into())
            .or_insert(ParameterValue::Uint(correlation_id));
        let start = flags & abi::REQUEST_FLAG_SEQUENCE_START != 0;
        let end = flags & abi::REQUEST_FLAG_SEQUENCE_END != 0;
        parameters.insert("sequence_start".into(), ParameterValue::Bool(start));
        parameters.insert("sequence_end".into(), ParameterValue::Bool(end));
    }
    Ok(parameters)
}

/// # Safety
/// `value` points at what `kind` says: a C string, an `int64_t` or a `bool`.
unsafe fn parameter_value(kind: u32, value: *const c_void) -> Option<ParameterValue> {
    if value.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    unsafe {
        match kind {
            parameter_type::STRING => Some(ParameterValue::String(text(value.cast()))),
            parameter_type::INT => Some(ParameterValue::Int(*value.cast::<i64>())),
            parameter_type::BOOL => Some(ParameterValue::Bool(*value.cast::<bool>())),
            parameter_type::DOUBLE => Some(ParameterValue::Double(*value.cast::<f64>())),
            _ => None,
        }
    }
}

/// `TRITONSERVER_DataType` codes, 1 (`BOOL`) to 14 (`BF16`), in the order
/// of [`DataType::all`].
pub(crate) fn data_type(code: u32) -> Option<DataType> {
    let index = usize::try_from(code).ok()?.checked_sub(1)?;
    DataType::all().get(index).copied()
}

/// The code of `datatype` (see [`data_type`]).
pub(crate) fn data_type_code(datatype: DataType) -> u32 {
    DataType::all()
        .iter()
        .position(|d| *d == datatype)
        .map_or(0, |i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_type_codes_are_tritons() {
        // TRITONSERVER_DataType: INVALID 0, BOOL 1, ..., FP32 11, BYTES 13, BF16 14.
        assert_eq!(data_type(1), Some(DataType::Bool));
        assert_eq!(data_type(11), Some(DataType::Fp32));
        assert_eq!(data_type(13), Some(DataType::Bytes));
        assert_eq!(data_type(14), Some(DataType::Bf16));
        assert_eq!(data_type(0), None);
        assert_eq!(data_type(15), None);
        for &datatype in DataType::all() {
            assert_eq!(data_type(data_type_code(datatype)), Some(datatype));
        }
    }
}
