//! `TRITONSERVER_Parameter*`.

use std::ffi::{c_char, c_void};

use crate::{
    ffi::{PARAMETER_BOOL, PARAMETER_DOUBLE, PARAMETER_INT, PARAMETER_STRING, str_of},
    parameter::{CValue, ParameterHandle},
};

/// `TRITONSERVER_ParameterNew`: a string, integer, boolean or double
/// parameter the caller owns; null for another type or a null argument.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ParameterNew(
    name: *const c_char,
    kind: u32,
    value: *const c_void,
) -> *mut ParameterHandle {
    // SAFETY: `name` is null or a C string.
    let Some(name) = (unsafe { str_of(name) }) else {
        return std::ptr::null_mut();
    };
    if value.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: non-null, and the API says `value` points to a value of `kind`.
    let value = unsafe {
        match kind {
            PARAMETER_STRING => match str_of(value.cast()) {
                Some(text) => CValue::String(crate::ffi::c_string(text)),
                None => return std::ptr::null_mut(),
            },
            PARAMETER_INT => CValue::Int(value.cast::<i64>().read_unaligned()),
            PARAMETER_BOOL => CValue::Bool(value.cast::<bool>().read()),
            PARAMETER_DOUBLE => CValue::Double(value.cast::<f64>().read_unaligned()),
            _ => return std::ptr::null_mut(),
        }
    };
    Box::into_raw(Box::new(ParameterHandle::new(name, value)))
}

/// `TRITONSERVER_ParameterBytesNew`: a BYTES parameter the caller owns.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ParameterBytesNew(
    name: *const c_char,
    byte_ptr: *const c_void,
    size: u64,
) -> *mut ParameterHandle {
    // SAFETY: `name` is null or a C string.
    let Some(name) = (unsafe { str_of(name) }) else {
        return std::ptr::null_mut();
    };
    let bytes = if byte_ptr.is_null() || size == 0 {
        Vec::new()
    } else {
        // SAFETY: the caller gives `size` readable bytes at `byte_ptr`.
        unsafe { std::slice::from_raw_parts(byte_ptr.cast::<u8>(), size as usize) }.to_vec()
    };
    Box::into_raw(Box::new(ParameterHandle::new(name, CValue::Bytes(bytes))))
}

/// `TRITONSERVER_ParameterDelete`.
#[unsafe(no_mangle)]
pub extern "C" fn TRITONSERVER_ParameterDelete(parameter: *mut ParameterHandle) {
    if !parameter.is_null() {
        // SAFETY: a parameter the caller owned and gives up.
        drop(unsafe { Box::from_raw(parameter) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_keep_their_name_type_and_value() {
        let number = 7_i64;
        let int =
            TRITONSERVER_ParameterNew(c"n".as_ptr(), PARAMETER_INT, (&raw const number).cast());
        let text = TRITONSERVER_ParameterNew(c"s".as_ptr(), PARAMETER_STRING, c"v".as_ptr().cast());
        let bytes = TRITONSERVER_ParameterBytesNew(c"b".as_ptr(), b"xy".as_ptr().cast(), 2);
        // SAFETY: all three were just made.
        unsafe {
            assert_eq!(*int, ParameterHandle::new("n", CValue::Int(7)));
            assert_eq!(
                *text,
                ParameterHandle::new("s", CValue::String(c"v".into()))
            );
            assert_eq!(
                *bytes,
                ParameterHandle::new("b", CValue::Bytes(b"xy".to_vec()))
            );
        }
        for parameter in [int, text, bytes] {
            TRITONSERVER_ParameterDelete(parameter);
        }
    }

    #[test]
    fn an_unknown_type_makes_no_parameter() {
        let number = 7_i64;
        let p = TRITONSERVER_ParameterNew(c"n".as_ptr(), 9, (&raw const number).cast());
        assert!(p.is_null());
    }
}
