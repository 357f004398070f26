//! API versions and the names of Triton's enums.

use std::ffi::{CStr, c_char};

use oxiserve_types::DataType;

use crate::{
    error::{ErrorHandle, status, write},
    ffi::{data_type, data_type_code, str_of},
};

/// The TRITONBACKEND API this server implements: Triton 2.51's.
const BACKEND_API: (u32, u32) = (1, 19);
/// The TRITONSERVER API this server implements: Triton 2.51's.
const SERVER_API: (u32, u32) = (1, 34);

/// `TRITONBACKEND_ApiVersion`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONBACKEND_ApiVersion(major: *mut u32, minor: *mut u32) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: out-arguments, null refused.
        unsafe { write(major, "major", BACKEND_API.0)? };
        // SAFETY: as above.
        unsafe { write(minor, "minor", BACKEND_API.1) }
    })
}

/// `TRITONSERVER_ApiVersion`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ApiVersion(major: *mut u32, minor: *mut u32) -> *mut ErrorHandle {
    status(|| {
        // SAFETY: out-arguments, null refused.
        unsafe { write(major, "major", SERVER_API.0)? };
        // SAFETY: as above.
        unsafe { write(minor, "minor", SERVER_API.1) }
    })
}

/// `TRITONSERVER_DataTypeString`: `FP32`, ..., `<invalid>`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_DataTypeString(datatype: u32) -> *const c_char {
    data_type(datatype).map_or(c"<invalid>".as_ptr(), |dtype| wire_name(dtype).as_ptr())
}

/// `TRITONSERVER_StringToDataType`: the protocol name's type, or INVALID.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_StringToDataType(dtype: *const c_char) -> u32 {
    // SAFETY: null or a C string.
    unsafe { str_of(dtype) }
        .and_then(DataType::from_wire_name)
        .map_or(0, data_type_code)
}

/// `TRITONSERVER_DataTypeByteSize`: 0 for BYTES and INVALID.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_DataTypeByteSize(datatype: u32) -> u32 {
    data_type(datatype)
        .and_then(DataType::element_size)
        .map_or(0, |size| size as u32)
}

/// `TRITONSERVER_MemoryTypeString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_MemoryTypeString(memtype: u32) -> *const c_char {
    [c"CPU", c"CPU_PINNED", c"GPU"]
        .get(memtype as usize)
        .map_or(c"<invalid>".as_ptr(), |name| name.as_ptr())
}

/// `TRITONSERVER_ParameterTypeString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ParameterTypeString(paramtype: u32) -> *const c_char {
    [c"STRING", c"INT", c"BOOL", c"DOUBLE", c"BYTES"]
        .get(paramtype as usize)
        .map_or(c"<invalid>".as_ptr(), |name| name.as_ptr())
}

/// `TRITONSERVER_InstanceGroupKindString`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_InstanceGroupKindString(kind: u32) -> *const c_char {
    [c"AUTO", c"CPU", c"GPU", c"MODEL"]
        .get(kind as usize)
        .map_or(c"<invalid>".as_ptr(), |name| name.as_ptr())
}

/// The protocol name of `dtype` as a C string.
fn wire_name(dtype: DataType) -> &'static CStr {
    match dtype {
        DataType::Bool => c"BOOL",
        DataType::Uint8 => c"UINT8",
        DataType::Uint16 => c"UINT16",
        DataType::Uint32 => c"UINT32",
        DataType::Uint64 => c"UINT64",
        DataType::Int8 => c"INT8",
        DataType::Int16 => c"INT16",
        DataType::Int32 => c"INT32",
        DataType::Int64 => c"INT64",
        DataType::Fp16 => c"FP16",
        DataType::Fp32 => c"FP32",
        DataType::Fp64 => c"FP64",
        DataType::Bytes => c"BYTES",
        DataType::Bf16 => c"BF16",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: *const c_char) -> &'static str {
        // SAFETY: the functions under test return static C strings.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap()
    }

    #[test]
    fn data_types_by_number_and_name() {
        for &dtype in DataType::all() {
            let code = data_type_code(dtype);
            assert_eq!(text(TRITONSERVER_DataTypeString(code)), dtype.wire_name());
            let name = std::ffi::CString::new(dtype.wire_name()).unwrap();
            assert_eq!(TRITONSERVER_StringToDataType(name.as_ptr()), code);
        }
        assert_eq!(TRITONSERVER_StringToDataType(c"FP32".as_ptr()), 11);
        assert_eq!(TRITONSERVER_StringToDataType(c"STRING".as_ptr()), 0);
        assert_eq!(text(TRITONSERVER_DataTypeString(0)), "<invalid>");
        assert_eq!(TRITONSERVER_DataTypeByteSize(11), 4);
        assert_eq!(TRITONSERVER_DataTypeByteSize(13), 0);
    }

    #[test]
    fn enum_names() {
        assert_eq!(text(TRITONSERVER_MemoryTypeString(1)), "CPU_PINNED");
        assert_eq!(text(TRITONSERVER_MemoryTypeString(3)), "<invalid>");
        assert_eq!(text(TRITONSERVER_ParameterTypeString(4)), "BYTES");
        assert_eq!(text(TRITONSERVER_InstanceGroupKindString(3)), "MODEL");
    }

    #[test]
    fn api_versions_are_triton_2_51_s() {
        let (mut major, mut minor) = (0, 0);
        assert!(TRITONBACKEND_ApiVersion(&mut major, &mut minor).is_null());
        assert_eq!((major, minor), (1, 19));
        assert!(TRITONSERVER_ApiVersion(&mut major, &mut minor).is_null());
        assert_eq!((major, minor), (1, 34));
    }
}
